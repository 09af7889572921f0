// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// tcmud's two error conventions:
//  - hot paths (per command, per completion, per doorbell): an int, 0 or
//    -errno, as liburing and the kernel do; no allocation, nothing to log;
//  - set-up (opening a device, a socket, a bus, a netlink family, reading
//    a file): setup_result<T>, the value or a setup_error carrying the errno
//    AND a sentence for the one log line the caller writes. It allocates,
//    which set-up can afford.
// errno is read into setup_error before anything else runs: brace
// initialisation evaluates left to right, so `setup_error{errno, path + ...}`
// saves errno before the string is built (and perhaps allocated).
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace tcmud {

struct setup_error {
	int error = 0;       // a positive errno
	std::string message; // what failed, without the errno text
	std::string hint;    // optional: what to check, for a person

	// "message: strerror(error) — hint".
	std::string what() const
	{
		std::string s = message.empty() ? std::string(std::strerror(error))
						 : message + ": " + std::strerror(error);
		if (!hint.empty())
			s += " — " + hint;
		return s;
	}
	// As a hot-path value.
	int negative_errno() const { return -error; }
};

template <class T>
class [[nodiscard]] setup_result {
public:
	setup_result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
	setup_result(setup_error e) : v_(std::in_place_index<1>, std::move(e)) {}
	// From what T converts from (a derived class's unique_ptr into a
	// base's): one conversion, as returning T itself would be.
	template <class U>
		requires(!std::is_same_v<std::remove_cvref_t<U>, T> &&
			 !std::is_same_v<std::remove_cvref_t<U>, setup_error> &&
			 std::is_convertible_v<U &&, T>)
	setup_result(U &&value) : v_(std::in_place_index<0>, T(std::forward<U>(value)))
	{
	}

	bool ok() const { return v_.index() == 0; }
	explicit operator bool() const { return ok(); }

	T &value() { return std::get<0>(v_); }
	const T &value() const { return std::get<0>(v_); }
	T &operator*() { return value(); }
	T *operator->() { return &value(); }
	// Only when !ok().
	const setup_error &error() const { return std::get<1>(v_); }

private:
	std::variant<T, setup_error> v_;
};

// A set-up step that yields nothing but success or a setup_error.
template <>
class [[nodiscard]] setup_result<void> {
public:
	setup_result() = default;
	setup_result(setup_error e) : error_(std::move(e)), failed_(true) {}

	bool ok() const { return !failed_; }
	explicit operator bool() const { return ok(); }
	const setup_error &error() const { return error_; }

private:
	setup_error error_;
	bool failed_ = false;
};

} // namespace tcmud
