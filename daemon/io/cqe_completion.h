// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Completions the engine keeps for itself (fd watches, the wake channel).
// Unlike io_completion they see the CQE flags, which a multishot request
// needs to know whether it is still armed (IORING_CQE_F_MORE).
#include <cstdint>

namespace tcmud {

class cqe_completion {
public:
	virtual void on_cqe(int32_t result, uint32_t flags) = 0;

protected:
	~cqe_completion() = default;
};

} // namespace tcmud
