// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/handler_registry.h"

#include <array>

#include "file/file_handler.h"
#include "ram/ram_handler.h"
#ifdef TCMUD_HAVE_RBD
#include "rbd/rbd_handler.h"
#endif

namespace tcmud {

std::span<const handler_ops *const> builtin_handlers()
{
	static const auto handlers = std::to_array<const handler_ops *>({
		&file_handler,
		&ram_handler,
#ifdef TCMUD_HAVE_RBD
		&rbd_handler,  // only where librbd was found at build time
#endif
	});
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
