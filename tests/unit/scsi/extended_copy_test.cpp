// SPDX-License-Identifier: GPL-2.0-or-later
// EXTENDED COPY (LID1) and RECEIVE COPY RESULTS: copies within one logical
// unit and to another one found through a copy_target_registry, each field
// of the parameter list with its sense, the order of those checks, the
// range lock, and what the copy manager reports (OPERATING PARAMETERS,
// COPY STATUS, VPD 0x8f, 3PC).
#include <catch2/catch.hpp>

#include "byte_order.h"
#include "copy_targets.h"
#include "scsi_harness.h"
#include "third_party_copy.h"

using namespace tcmud::scsi;
using namespace tcmud::scsi::test;
using tcmud::backstore_queue;
using tcmud::block_io;
using tcmud::block_op;

namespace {

constexpr asc_ascq NOT_REACHABLE{0x0d, 0x02};
constexpr asc_ascq TOO_MANY_CSCDS{0x26, 0x06};
constexpr asc_ascq UNSUPPORTED_CSCD{0x26, 0x07};
constexpr asc_ascq TOO_MANY_SEGMENTS{0x26, 0x08};
constexpr asc_ascq UNSUPPORTED_SEGMENT{0x26, 0x09};
constexpr uint8_t USAGE_HOLD = 0x00, USAGE_DISCARD = 0x02, USAGE_NONE = 0x03;

naa_id naa_of(const char *serial)
{
	auto n = naa_from_serial(serial);
	REQUIRE(n);
	return *n;
}

std::vector<uint8_t> cscd(const naa_id &naa, uint32_t block_length = 512)
{
	std::vector<uint8_t> d(32);
	d[0] = 0xe4;
	d[4] = 0x01;  // binary
	d[5] = 0x03;  // LU, NAA
	d[7] = 16;
	std::copy(naa.begin(), naa.end(), d.begin() + 8);
	put_be(d, 29, 3, block_length);
	return d;
}

std::vector<uint8_t> segment(uint16_t src, uint16_t dst, uint16_t blocks, uint64_t src_lba,
			     uint64_t dst_lba)
{
	std::vector<uint8_t> d(28);
	d[0] = 0x02;
	put_be16(d, 2, 24);
	put_be16(d, 4, src);
	put_be16(d, 6, dst);
	put_be16(d, 10, blocks);
	put_be64(d, 12, src_lba);
	put_be64(d, 20, dst_lba);
	return d;
}

std::vector<uint8_t> parameter_list(const std::vector<std::vector<uint8_t>> &cscds,
				    const std::vector<std::vector<uint8_t>> &segments,
				    uint8_t usage = USAGE_DISCARD, uint8_t list_id = 1)
{
	std::vector<uint8_t> l(16);
	l[0] = list_id;
	l[1] = static_cast<uint8_t>(usage << 3);
	for (const auto &c : cscds)
		l.insert(l.end(), c.begin(), c.end());
	put_be16(l, 2, l.size() - 16);
	std::size_t at = l.size();
	for (const auto &s : segments)
		l.insert(l.end(), s.begin(), s.end());
	put_be32(l, 8, l.size() - at);
	return l;
}

std::vector<uint8_t> xcopy_cdb(uint32_t length)
{
	std::vector<uint8_t> c(16);
	c[0] = 0x83;
	put_be32(c, 10, length);
	return c;
}

std::vector<uint8_t> rcr_cdb(uint8_t sa, uint8_t list_id = 0, uint32_t allocation = 256)
{
	std::vector<uint8_t> c(16);
	c[0] = 0x84;
	c[1] = sa;
	c[2] = list_id;
	put_be32(c, 10, allocation);
	return c;
}

// A channel to another fixture's RAM store, as a device's queue opened on
// another device's backstore would be.
struct forwarding_queue final : backstore_queue {
	ram_backstore &store;
	explicit forwarding_queue(ram_backstore &s) : store(s) {}
	void submit(block_io &io) override { store.submit(io); }
};

struct fixture_target final : copy_target {
	lu_fixture &f;
	int opened = 0;
	explicit fixture_target(lu_fixture &fx) : f(fx) {}
	logical_unit &lu() override { return *f.lu; }
	std::unique_ptr<backstore_queue> open_queue(backstore_queue &) override
	{
		opened++;
		return std::make_unique<forwarding_queue>(f.store);
	}
};

// a and b as the daemon would have them with copy_groups = "g: a b" (or,
// with allow_copies false, with no copy_groups at all).
struct two_luns {
	copy_target_registry registry;
	lu_fixture a{[this](logical_unit_config &c) {
		c.unit_serial = [] { return std::string("aaaa0001"); };
		c.copy_targets = &registry;
		c.copy_self = {0, "a"};
	}};
	lu_fixture b{[this](logical_unit_config &c) {
		c.unit_serial = [] { return std::string("bbbb0002"); };
		c.copy_targets = &registry;
		c.copy_self = {1, "b"};
	}};
	std::shared_ptr<fixture_target> a_target = std::make_shared<fixture_target>(a);
	std::shared_ptr<fixture_target> b_target = std::make_shared<fixture_target>(b);
	naa_id naa_a = naa_of("aaaa0001"), naa_b = naa_of("bbbb0002");
	explicit two_luns(bool allow_copies = true)
	{
		registry.add(naa_a, {0, "a"}, a_target);
		registry.add(naa_b, {1, "b"}, b_target);
		if (allow_copies)
			registry.set_policy([](const copy_member &x, const copy_member &y) {
				return (x.device == "a" || x.device == "b") &&
				       (y.device == "a" || y.device == "b");
			});
	}

	scsi_result xcopy(const std::vector<uint8_t> &list)
	{
		return a.run(xcopy_cdb(static_cast<uint32_t>(list.size())), list);
	}
};

} // namespace

TEST_CASE("EXTENDED COPY copies blocks within one logical unit", "[xcopy]")
{
	two_luns t;
	auto data = pattern(8 * 512, 5);
	std::copy(data.begin(), data.end(), t.a.block(10).begin());
	require_good(t.xcopy(parameter_list({cscd(t.naa_a)}, {segment(0, 0, 8, 10, 100)})));
	CHECK(std::equal(data.begin(), data.end(), t.a.block(100, 8).begin()));
	CHECK(t.b_target->opened == 0);
}

TEST_CASE("EXTENDED COPY copies to another logical unit of the daemon and back", "[xcopy]")
{
	two_luns t;
	// 1000 blocks: two chunks of the 256 KiB bounce buffer.
	auto data = pattern(1000 * 512, 9);
	std::copy(data.begin(), data.end(), t.a.block(0).begin());
	require_good(t.xcopy(parameter_list({cscd(t.naa_a), cscd(t.naa_b)},
					    {segment(0, 1, 1000, 0, 20)})));
	CHECK(std::equal(data.begin(), data.end(), t.b.block(20, 1000).begin()));
	CHECK(t.b.store.count(block_op::write) == 2);
	CHECK(t.a.store.count(block_op::write) == 0);
	CHECK(t.b_target->opened == 1);
	// Back from b into a, two segments in one list.
	t.a.fill_block(0, 0, 1000);
	require_good(t.xcopy(parameter_list({cscd(t.naa_b), cscd(t.naa_a)},
					    {segment(0, 1, 500, 20, 0), segment(0, 1, 500, 520, 500)})));
	CHECK(std::equal(data.begin(), data.end(), t.a.block(0, 1000).begin()));
}

TEST_CASE("EXTENDED COPY onto an overlapping higher range copies from the end", "[xcopy]")
{
	two_luns t;
	// 600 blocks from 0 to 100: a forward chunked copy would read back
	// its own first chunk's output.
	auto data = pattern(600 * 512, 3);
	std::copy(data.begin(), data.end(), t.a.block(0).begin());
	require_good(t.xcopy(parameter_list({cscd(t.naa_a)}, {segment(0, 0, 600, 0, 100)})));
	CHECK(std::equal(data.begin(), data.end(), t.a.block(100, 600).begin()));
}

TEST_CASE("EXTENDED COPY with PARAMETER LIST LENGTH 0 does nothing", "[xcopy]")
{
	two_luns t;
	require_good(t.a.run(xcopy_cdb(0)));
	CHECK(t.a.store.history().empty());
}

TEST_CASE("EXTENDED COPY parameter list length errors", "[xcopy]")
{
	two_luns t;
	// Shorter than the header.
	require_sense(t.a.run(xcopy_cdb(8), std::vector<uint8_t>(8)), ILLEGAL_REQUEST,
		      ASC_PARAMETER_LIST_LENGTH_ERROR);
	// Descriptor lists longer than the parameter list.
	auto l = parameter_list({cscd(t.naa_a)}, {segment(0, 0, 1, 0, 1)});
	require_sense(t.a.run(xcopy_cdb(static_cast<uint32_t>(l.size() - 4)), l), ILLEGAL_REQUEST,
		      ASC_PARAMETER_LIST_LENGTH_ERROR);
	// A CSCD descriptor cut short.
	l = parameter_list({cscd(t.naa_a)}, {});
	put_be16(l, 2, 40);
	l.resize(16 + 40);
	l[16 + 32] = 0xe4;
	require_sense(t.xcopy(l), ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	// A data-out buffer shorter than the CDB says.
	l = parameter_list({cscd(t.naa_a)}, {segment(0, 0, 1, 0, 1)});
	require_sense(t.a.run(xcopy_cdb(static_cast<uint32_t>(l.size() + 10)), l),
		      ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_COMMAND_IU);
	CHECK(t.a.store.history().empty());
}

TEST_CASE("EXTENDED COPY header fields", "[xcopy]")
{
	two_luns t;
	auto seg = segment(0, 0, 1, 0, 1);
	// LIST ID USAGE 01b is reserved.
	auto r = t.xcopy(parameter_list({cscd(t.naa_a)}, {seg}, 0x01));
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	CHECK(r.sense.field == 1);
	CHECK(r.sense.bit == 4);
	// 11b (no list ID) with a list ID.
	r = t.xcopy(parameter_list({cscd(t.naa_a)}, {seg}, USAGE_NONE, 7));
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	CHECK(r.sense.field == 0);
	require_good(t.xcopy(parameter_list({cscd(t.naa_a)}, {seg}, USAGE_NONE, 0)));
	// Reserved bits of byte 1, reserved bytes 4-7.
	auto l = parameter_list({cscd(t.naa_a)}, {seg});
	l[1] |= 0x40;
	r = t.xcopy(l);
	CHECK(r.sense.field == 1);
	CHECK(r.sense.bit == 6);
	l = parameter_list({cscd(t.naa_a)}, {seg});
	l[5] = 1;
	CHECK(t.xcopy(l).sense.field == 5);
	// Inline data: MAXIMUM INLINE DATA LENGTH is 0.
	l = parameter_list({cscd(t.naa_a)}, {seg});
	put_be32(l, 12, 4);
	l.resize(l.size() + 4);
	r = t.xcopy(l);
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	CHECK(r.sense.field == 12);
}

TEST_CASE("EXTENDED COPY CSCD descriptor checks", "[xcopy]")
{
	two_luns t;
	auto seg = segment(0, 0, 1, 0, 1);
	// Not an identification descriptor (E0h: FC N_Port_Name).
	auto c = cscd(t.naa_a);
	c[0] = 0xe0;
	auto r = t.xcopy(parameter_list({c}, {seg}));
	require_sense(r, ILLEGAL_REQUEST, UNSUPPORTED_CSCD);
	CHECK(r.sense.field == 16);
	// 17 descriptors: one too many.
	std::vector<std::vector<uint8_t>> many(17, cscd(t.naa_a));
	require_sense(t.xcopy(parameter_list(many, {seg})), ILLEGAL_REQUEST, TOO_MANY_CSCDS);
	// 17 descriptors and 64 segments: past MAXIMUM DESCRIPTOR LIST LENGTH
	// (2304) as well, which is the parameter list's length error.
	std::vector<std::vector<uint8_t>> segs(64, seg);
	require_sense(t.xcopy(parameter_list(many, segs)), ILLEGAL_REQUEST,
		      ASC_PARAMETER_LIST_LENGTH_ERROR);
	// Another peripheral device type than direct access.
	for (int byte1 : {0x01, 0x05, 0x1f}) {
		c = cscd(t.naa_a);
		c[1] = static_cast<uint8_t>(byte1);
		r = t.xcopy(parameter_list({c}, {seg}));
		require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
		CHECK(r.sense.field == 17);
	}
	// NUL and every LU ID TYPE are not looked at (LIO's copy manager
	// accepts them; libiscsi's ExtendedCopy.ValidTgtDescr sends 10b).
	for (int byte1 : {0x20, 0x40, 0x80, 0xc0, 0xe0}) {
		c = cscd(t.naa_a);
		c[1] = static_cast<uint8_t>(byte1);
		INFO("byte 1 " << byte1);
		require_good(t.xcopy(parameter_list({c}, {seg})));
	}
	// DISK BLOCK LENGTH other than the LUN's.
	r = t.xcopy(parameter_list({cscd(t.naa_a, 4096)}, {seg}));
	require_sense(r, ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	CHECK(r.sense.field == 16 + 29);
}

TEST_CASE("EXTENDED COPY segment descriptor checks", "[xcopy]")
{
	two_luns t;
	auto c = cscd(t.naa_a);
	constexpr uint16_t SEG = 16 + 32;  // where the first segment starts
	auto s = segment(0, 0, 1, 0, 1);
	s[0] = 0x0a;  // block with offset: not supported
	auto r = t.xcopy(parameter_list({c}, {s}));
	require_sense(r, ILLEGAL_REQUEST, UNSUPPORTED_SEGMENT);
	CHECK(r.sense.field == SEG);
	std::vector<std::vector<uint8_t>> many(65, segment(0, 0, 1, 0, 1));
	require_sense(t.xcopy(parameter_list({c}, many)), ILLEGAL_REQUEST, TOO_MANY_SEGMENTS);
	s = segment(0, 0, 1, 0, 1);
	put_be16(s, 2, 20);
	CHECK(t.xcopy(parameter_list({c}, {s})).sense.field == SEG + 2);
	// A CSCD index past the list (source 1 of 1, destination 3):
	// an unreachable copy target, as in LIO.
	for (auto [src, dst] : {std::pair{1, 0}, std::pair{0, 3}}) {
		s = segment(uint16_t(src), uint16_t(dst), 1, 0, 1);
		require_sense(t.xcopy(parameter_list({c}, {s})), COPY_ABORTED, NOT_REACHABLE);
	}
	s = segment(0, 0, 1, 0, 1);
	s[1] = 0x04;
	r = t.xcopy(parameter_list({c}, {s}));
	CHECK(r.sense.field == SEG + 1);
	CHECK(r.sense.bit == 2);
	// DC and CAT are accepted.
	s = segment(0, 0, 1, 0, 1);
	s[1] = 0x03;
	require_good(t.xcopy(parameter_list({c}, {s})));
}

TEST_CASE("EXTENDED COPY naming a LUN this daemon does not serve", "[xcopy]")
{
	two_luns t;
	auto r = t.xcopy(parameter_list({cscd(t.naa_a), cscd(naa_of("cccc0003"))},
					{segment(0, 1, 1, 0, 0)}));
	require_sense(r, COPY_ABORTED, NOT_REACHABLE);
	// A designator that is not an NAA is not resolved either.
	auto c = cscd(t.naa_b);
	c[5] = 0x01;  // T10 vendor ID
	require_sense(t.xcopy(parameter_list({cscd(t.naa_a), c}, {segment(0, 1, 1, 0, 0)})),
		      COPY_ABORTED, NOT_REACHABLE);
	// Gone from the registry: not reachable any more.
	t.registry.remove(t.b_target.get());
	require_sense(t.xcopy(parameter_list({cscd(t.naa_a), cscd(t.naa_b)},
					     {segment(0, 1, 1, 0, 0)})),
		      COPY_ABORTED, NOT_REACHABLE);
	CHECK(t.a.store.history().empty());
	CHECK(t.b.store.history().empty());
}

TEST_CASE("EXTENDED COPY between devices no copy group joins is refused", "[xcopy]")
{
	// The default: no policy. b is served, but a's initiator may not
	// reach it, in either direction, and learns no more than for a LUN
	// nobody serves.
	two_luns t(false);
	auto secret = pattern(8 * 512, 7);
	std::copy(secret.begin(), secret.end(), t.b.block(0).begin());
	require_sense(t.xcopy(parameter_list({cscd(t.naa_b), cscd(t.naa_a)},
					     {segment(0, 1, 8, 0, 0)})),
		      COPY_ABORTED, NOT_REACHABLE);
	require_sense(t.xcopy(parameter_list({cscd(t.naa_a), cscd(t.naa_b)},
					     {segment(0, 1, 8, 0, 0)})),
		      COPY_ABORTED, NOT_REACHABLE);
	CHECK(t.a.store.history().empty());
	CHECK(t.b.store.history().empty());
	CHECK(t.b_target->opened == 0);
	// Within a, copies still work, naming a by its NAA.
	require_good(t.xcopy(parameter_list({cscd(t.naa_a)}, {segment(0, 0, 8, 0, 100)})));

	// A policy that joins a with another device, not with b.
	t.registry.set_policy([](const copy_member &x, const copy_member &y) {
		return (x.device == "a" && y.device == "c") || (x.device == "c" && y.device == "a");
	});
	require_sense(t.xcopy(parameter_list({cscd(t.naa_b), cscd(t.naa_a)},
					     {segment(0, 1, 8, 0, 0)})),
		      COPY_ABORTED, NOT_REACHABLE);
	CHECK(t.b_target->opened == 0);
	// The policy sees who asks: a device named "a" under another HBA is
	// not this a.
	t.registry.set_policy([](const copy_member &x, const copy_member &y) {
		return x == copy_member{7, "a"} || y == copy_member{7, "a"};
	});
	require_sense(t.xcopy(parameter_list({cscd(t.naa_b), cscd(t.naa_a)},
					     {segment(0, 1, 8, 0, 0)})),
		      COPY_ABORTED, NOT_REACHABLE);
	// Joined: the same copy reads b.
	t.registry.set_policy([](const copy_member &, const copy_member &) { return true; });
	require_good(t.xcopy(parameter_list({cscd(t.naa_b), cscd(t.naa_a)},
					    {segment(0, 1, 8, 0, 0)})));
	CHECK(std::equal(secret.begin(), secret.end(), t.a.block(0, 8).begin()));
}

TEST_CASE("EXTENDED COPY checks every segment's range before copying", "[xcopy]")
{
	two_luns t;
	auto r = t.xcopy(parameter_list({cscd(t.naa_a), cscd(t.naa_b)},
					{segment(0, 1, 4, 0, 0),
					 segment(0, 1, 4, 0, lu_fixture::BLOCKS - 2)}));
	require_sense(r, COPY_ABORTED, ASC_LBA_OUT_OF_RANGE);
	CHECK(r.sense.information == lu_fixture::BLOCKS - 2);
	CHECK(t.b.store.count(block_op::write) == 0);  // not even the first segment
	require_sense(t.xcopy(parameter_list({cscd(t.naa_a)}, {segment(0, 0, 2, UINT64_MAX, 0)})),
		      COPY_ABORTED, ASC_LBA_OUT_OF_RANGE);
}

TEST_CASE("EXTENDED COPY with an unreadable source is COPY ABORTED", "[xcopy]")
{
	two_luns t;
	t.a.store.inject(block_op::read, -EIO);
	auto r = t.xcopy(parameter_list({cscd(t.naa_a), cscd(t.naa_b)}, {segment(0, 1, 4, 0, 0)},
					USAGE_HOLD, 9));
	require_sense(r, COPY_ABORTED, ASC_UNRECOVERED_READ_ERROR);
	CHECK(t.b.store.count(block_op::write) == 0);
	auto s = t.a.run(rcr_cdb(0x00, 9), {}, 256);
	require_good(s);
	CHECK(s.data_in[4] == 0x02);  // completed with errors
	CHECK(t.a.lu->ranges().exclusive_users() == 0);
}

TEST_CASE("RECEIVE COPY RESULTS COPY STATUS returns a held copy's result once", "[xcopy]")
{
	two_luns t;
	require_good(t.xcopy(parameter_list({cscd(t.naa_a)}, {segment(0, 0, 8, 0, 8)}, USAGE_HOLD, 42)));
	auto r = t.a.run(rcr_cdb(0x00, 42), {}, 256);
	require_good(r);
	REQUIRE(r.read_len == 12);
	CHECK(get_be32(r.data_in, 0) == 8);
	CHECK(r.data_in[4] == 0x01);         // completed without errors
	CHECK(get_be16(r.data_in, 5) == 1);  // segments processed
	CHECK(r.data_in[7] == 0x00);         // bytes
	CHECK(get_be32(r.data_in, 8) == 8 * 512);
	require_invalid_cdb(t.a.run(rcr_cdb(0x00, 42), {}, 256), 2);
	// A copy with LIST ID USAGE 10b holds nothing.
	require_good(t.xcopy(parameter_list({cscd(t.naa_a)}, {segment(0, 0, 8, 0, 8)}, USAGE_DISCARD, 43)));
	require_invalid_cdb(t.a.run(rcr_cdb(0x00, 43), {}, 256), 2);
}

TEST_CASE("RECEIVE COPY RESULTS OPERATING PARAMETERS reports the enforced limits", "[xcopy]")
{
	two_luns t;
	auto r = t.a.run(rcr_cdb(0x03), {}, 256);
	require_good(r);
	REQUIRE(r.read_len == 46);
	CHECK(get_be32(r.data_in, 0) == 42);
	CHECK(r.data_in[4] == 0x01);                      // SNLID
	CHECK(get_be16(r.data_in, 8) == xcopy::MAX_CSCD_DESCRIPTORS);
	CHECK(get_be16(r.data_in, 10) == xcopy::MAX_SEGMENT_DESCRIPTORS);
	CHECK(get_be32(r.data_in, 12) == xcopy::MAX_DESCRIPTOR_LIST_LENGTH);
	CHECK(get_be32(r.data_in, 16) == 0xffff * 512);   // MAXIMUM SEGMENT LENGTH
	CHECK(get_be32(r.data_in, 20) == 0);              // no inline data
	CHECK(r.data_in[37] == 9);                        // 512-byte granularity
	CHECK(r.data_in[43] == 2);
	CHECK(r.data_in[44] == 0x02);
	CHECK(r.data_in[45] == 0xe4);
	// Allocation length cuts the answer.
	CHECK(t.a.run(rcr_cdb(0x03, 0, 10), {}, 256).read_len == 10);
}

TEST_CASE("RECEIVE COPY RESULTS and EXTENDED COPY CDB checks", "[xcopy]")
{
	two_luns t;
	require_invalid_cdb(t.a.run(rcr_cdb(0x01), {}, 256), 1, 4);  // RECEIVE DATA
	require_invalid_cdb(t.a.run(rcr_cdb(0x04), {}, 256), 1, 4);  // FAILED SEGMENT DETAILS
	auto c = rcr_cdb(0x03);
	c[2] = 1;  // LIST IDENTIFIER is not a field of OPERATING PARAMETERS
	require_invalid_cdb(t.a.run(c, {}, 256), 2, 0);
	c = xcopy_cdb(0);
	c[1] = 0x01;  // EXTENDED COPY(LID4)
	require_invalid_cdb(t.a.run(c), 1, 4);
	c = xcopy_cdb(0);
	c[2] = 0x80;  // reserved
	require_invalid_cdb(t.a.run(c), 2, 7);
}

TEST_CASE("INQUIRY reports 3PC and the Third-party Copy VPD page", "[xcopy]")
{
	two_luns t;
	auto r = t.a.run(inquiry_cdb(false, 0, 96), {}, 96);
	require_good(r);
	CHECK((r.data_in[5] & 0x08) != 0);
	r = t.a.run(inquiry_cdb(true, 0x8f, 255), {}, 255);
	require_good(r);
	CHECK(r.data_in[1] == 0x8f);
	std::size_t len = get_be16(r.data_in, 2) + 4;
	REQUIRE(len <= r.read_len);
	// Walk the descriptors: each a multiple of 4 bytes; these five types.
	std::vector<uint16_t> types;
	for (std::size_t at = 4; at < len;) {
		uint16_t type = get_be16(r.data_in, at), dlen = get_be16(r.data_in, at + 2);
		CHECK((4 + dlen) % 4 == 0);
		types.push_back(type);
		if (type == 0x0001) {  // Supported Commands
			CHECK(r.data_in[at + 4] == 7);
			CHECK(std::vector<uint8_t>(r.data_in.begin() + at + 5, r.data_in.begin() + at + 12) ==
			      std::vector<uint8_t>{0x83, 1, 0x00, 0x84, 2, 0x00, 0x03});
		}
		if (type == 0x0008) {  // Supported Descriptors
			CHECK(r.data_in[at + 4] == 2);
			CHECK(r.data_in[at + 5] == 0x02);
			CHECK(r.data_in[at + 6] == 0xe4);
		}
		at += 4 + dlen;
	}
	CHECK(types == std::vector<uint16_t>{0x0001, 0x0004, 0x0008, 0x000c, 0x8001});
}

TEST_CASE("EXTENDED COPY waits for a COMPARE AND WRITE on its destination", "[xcopy]")
{
	two_luns t;
	t.a.store.set_mode(ram_backstore::mode::deferred);
	t.a.fill_block(0, 0x77, 1);
	std::vector<uint8_t> caw = std::vector<uint8_t>(512);
	caw.resize(1024, 0x99);
	auto caw_cdb = compare_and_write_cdb(50, 1);
	data_buffer caw_buf(caw);
	command caw_cmd;
	caw_cmd.reset(caw_cdb, caw_buf.iovs, &t.a.owner);
	t.a.lu->execute(caw_cmd, t.a.store);
	REQUIRE(t.a.store.queued() == 1);  // CAW's read, range 50 held exclusively

	auto list = parameter_list({cscd(t.naa_a)}, {segment(0, 0, 1, 0, 50)});
	auto cdb = xcopy_cdb(static_cast<uint32_t>(list.size()));
	data_buffer buf(list);
	command copy;
	test_owner copy_owner;
	copy_owner.on_wake = [&](command &c) { t.a.lu->resume(c, t.a.store); };
	copy.reset(cdb, buf.iovs, &copy_owner);
	t.a.lu->execute(copy, t.a.store);
	REQUIRE(t.a.store.queued() == 2);
	t.a.store.complete(1);             // the copy's read of block 0
	CHECK(t.a.store.queued() == 1);    // its write waits for the CAW
	for (int i = 0; i < 4 && t.a.store.queued(); i++)
		t.a.store.complete(0);
	CHECK(copy_owner.wakes == 1);
	REQUIRE(copy_owner.done == 1);
	CHECK(copy.status() == SAM_STAT_GOOD);
	CHECK(t.a.block(50)[0] == 0x77);   // the copy landed after the CAW's 0x99
}

TEST_CASE("EXTENDED COPY with WCE=0 at its start writes every chunk with FUA", "[xcopy][integrity]")
{
	// Issue 14's F1 class: WCE is decided once, when the copy starts. A
	// MODE SELECT turning the cache on and off again between two chunks
	// must not let the chunk in between go without FUA while GOOD comes
	// back with WCE=0.
	two_luns t;
	t.a.lu->set_write_cache_enabled(false);
	t.a.store.set_mode(ram_backstore::mode::deferred);
	auto list = parameter_list({cscd(t.naa_a)},
				   {segment(0, 0, 1, 0, 100), segment(0, 0, 1, 1, 101)});
	auto cdb = xcopy_cdb(static_cast<uint32_t>(list.size()));
	data_buffer buf(list);
	command copy;
	test_owner copy_owner;
	copy.reset(cdb, buf.iovs, &copy_owner);
	t.a.lu->execute(copy, t.a.store);
	auto mode_select = [&](bool wce) {
		std::vector<uint8_t> l{0, 0, 0, 0, 0x08, 0x12};
		l.resize(4 + 20);
		l[6] = wce ? 0x04 : 0;
		require_good(t.a.run({MODE_SELECT_6, 0x10, 0, 0, static_cast<uint8_t>(l.size()), 0}, l));
	};
	for (int chunk = 0; chunk < 2; chunk++) {
		REQUIRE(t.a.store.queued() == 1);
		REQUIRE(t.a.store.queued_at(0).op == block_op::read);
		t.a.store.complete(0);
		REQUIRE(t.a.store.queued() == 1);
		REQUIRE(t.a.store.queued_at(0).op == block_op::write);
		CHECK(t.a.store.queued_at(0).fua);
		if (chunk == 0)
			mode_select(true);   // cache on while chunk 0 is written
		else
			mode_select(false);  // and off again before GOOD
		t.a.store.complete(0);
	}
	REQUIRE(copy_owner.done == 1);
	CHECK(copy.status() == SAM_STAT_GOOD);
	CHECK_FALSE(t.a.lu->write_cache_enabled());
}

TEST_CASE("EXTENDED COPY takes FUA from the destination's WCE, not the source's", "[xcopy][integrity]")
{
	two_luns t;
	t.a.lu->set_write_cache_enabled(true);
	t.b.lu->set_write_cache_enabled(false);
	require_good(t.xcopy(parameter_list({cscd(t.naa_a), cscd(t.naa_b)},
					    {segment(0, 1, 4, 0, 10), segment(1, 0, 4, 10, 20)})));
	auto to_b = t.b.store.history();
	auto to_a = t.a.store.history();
	REQUIRE(std::count_if(to_b.begin(), to_b.end(),
			      [](const auto &r) { return r.op == block_op::write; }) == 1);
	for (const auto &r : to_b)
		if (r.op == block_op::write)
			CHECK(r.fua);
	for (const auto &r : to_a)
		if (r.op == block_op::write)
			CHECK_FALSE(r.fua);
}
