// SPDX-License-Identifier: GPL-2.0-or-later
#include "file/file_handler.h"

#include "file/file_backstore.h"
#include "file/file_config.h"

namespace tcmud {
namespace {

setup_result<std::unique_ptr<backstore>> open_file(const backstore_config &cfg)
{
	auto store = file_backstore::open(cfg);
	if (!store)
		return store.error();
	return std::unique_ptr<backstore>(std::move(*store));
}

} // namespace

const handler_ops file_handler = {
	.subtype = "file",
	.config_desc =
		"PATH[;direct=1][;extend=1][;block=1]. PATH: absolute path of the "
		"backing regular file, no symbolic links. direct=1: use O_DIRECT. "
		"extend=1: grow a file smaller than the device size. "
		"block=1: PATH is a block device.",
	.check_config = check_file_config,
	.open = open_file,
};

} // namespace tcmud
