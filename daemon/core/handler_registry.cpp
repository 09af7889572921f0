// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/handler_registry.h"

#include <array>

#include "file/file_handler.h"
#include "ram/ram_handler.h"

namespace tcmud {

std::span<const handler_ops *const> builtin_handlers()
{
	static const std::array<const handler_ops *, 2> handlers = {&file_handler, &ram_handler};
	return handlers;
}

const handler_ops *find_handler(std::string_view subtype)
{
	for (const handler_ops *h : builtin_handlers())
		if (h->subtype == subtype)
			return h;
	return nullptr;
}

} // namespace tcmud
