// The arena's placement logic (issue 41), without a device: offsets meet
// the alignment and nonCoherentAtomSize, reservations never overlap, freed
// space merges back, and which buffers get an allocation of their own.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "runtime/block_space.h"

namespace pebench {
namespace {

TEST(MemoryArenaLayout, OffsetsAreAlignedAndNeverOverlap) {
  BlockSpace space(1 << 20);
  struct Live {
    uint64_t offset, size;
  };
  std::vector<Live> live;
  std::mt19937 rng(41);
  for (int i = 0; i < 2000; ++i) {
    if (!live.empty() && rng() % 3 == 0) {
      const size_t k = rng() % live.size();
      space.release(live[k].offset, live[k].size);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      continue;
    }
    const uint64_t alignment = uint64_t{1} << (rng() % 13);  // 1 .. 4096
    const uint64_t size = 1 + rng() % 20000;
    const auto at = space.reserve(size, alignment);
    if (!at) continue;  // full
    ASSERT_EQ(*at % alignment, 0u) << size << " @" << alignment;
    ASSERT_LE(*at + size, space.size());
    for (const Live& l : live) {
      ASSERT_TRUE(*at + size <= l.offset || l.offset + l.size <= *at)
          << "[" << *at << ", " << *at + size << ") overlaps [" << l.offset << ", " << l.offset + l.size << ")";
    }
    live.push_back({*at, size});
  }
  for (const Live& l : live) space.release(l.offset, l.size);
  EXPECT_TRUE(space.empty());
  EXPECT_EQ(space.free_bytes(), space.size());
}

TEST(MemoryArenaLayout, FirstFitReusesFreedSpaceAndMerges) {
  BlockSpace space(4096);
  EXPECT_EQ(space.reserve(100, 256), 0u);
  EXPECT_EQ(space.reserve(100, 256), 256u);
  EXPECT_EQ(space.reserve(100, 256), 512u);
  space.release(256, 100);
  EXPECT_EQ(space.reserve(200, 256), 256u);  // the hole, not the end
  space.release(0, 100);
  space.release(256, 200);
  space.release(512, 100);
  EXPECT_TRUE(space.empty());
  EXPECT_EQ(space.reserve(4096, 1), 0u);      // one range again: the whole block fits
  EXPECT_FALSE(space.reserve(1, 1).has_value());  // and it is full
}

TEST(MemoryArenaLayout, HostVisiblePlacementsAreAtomAligned) {
  // lavapipe: nonCoherentAtomSize 64; a GPU's may be 256 and more.
  for (uint64_t atom : {64u, 256u, 1024u}) {
    const Placement p = placement_for(1000, 16, /*host_visible=*/true, atom);
    EXPECT_EQ(p.alignment % atom, 0u);
    EXPECT_EQ(p.size % atom, 0u);
    EXPECT_GE(p.size, 1000u);
    // A flush of [offset, offset + size) of each buffer in a block is atom-aligned at both ends.
    BlockSpace space(1 << 16);
    for (int i = 0; i < 10; ++i) {
      const auto at = space.reserve(p.size, p.alignment);
      ASSERT_TRUE(at);
      EXPECT_EQ(*at % atom, 0u);
      EXPECT_EQ((*at + p.size) % atom, 0u);
    }
  }
  const Placement device = placement_for(1000, 16, /*host_visible=*/false, 1024);
  EXPECT_EQ(device.size, 1000u);
  EXPECT_EQ(device.alignment, kMinAlignment);
  EXPECT_EQ(placement_for(10, 65536, false, 64).alignment, 65536u);  // the driver's, when larger
}

TEST(MemoryArenaLayout, DedicatedOnlyWhereTheSpecOrTheSizeSaysSo) {
  const uint64_t block = kBlockBytes;
  EXPECT_EQ(dedicated_reason(false, false, 4096, block), DedicatedReason::kNone);
  EXPECT_EQ(dedicated_reason(false, false, block, block), DedicatedReason::kNone);
  EXPECT_EQ(dedicated_reason(false, false, block + 1, block), DedicatedReason::kLargerThanBlock);
  EXPECT_EQ(dedicated_reason(false, true, 4096, block), DedicatedReason::kPreferred);
  EXPECT_EQ(dedicated_reason(true, true, 4096, block), DedicatedReason::kRequired);
  EXPECT_STREQ(dedicated_reason_name(DedicatedReason::kPreferred), "prefersDedicatedAllocation");
}

TEST(MemoryArenaLayout, BlockSizeFitsTheHeapAndTheAllocationLimit) {
  EXPECT_EQ(block_size_for(uint64_t{16} << 30, 0), kBlockBytes);
  EXPECT_EQ(block_size_for(uint64_t{256} << 20, 0), uint64_t{32} << 20);  // an eighth of a small heap
  EXPECT_EQ(block_size_for(uint64_t{16} << 30, uint64_t{16} << 20), uint64_t{16} << 20);
  EXPECT_EQ(block_size_for(uint64_t{4} << 20, 0), kMinBlockBytes);  // not under 1 MiB ...
  EXPECT_EQ(block_size_for(uint64_t{512} << 10, 0), uint64_t{512} << 10);  // ... unless the heap is
}

}  // namespace
}  // namespace pebench
