#include "policy/stack_runs.h"

#include <algorithm>
#include <limits>

#include "policy/bounded_depth.h"

namespace lsm::policy {

size_t FirstFree(const Snapshot& snapshot) {
  const std::vector<Component>& stack = snapshot.stack;
  for (size_t i = stack.size(); i > 0; --i) {
    if (stack[i - 1].being_merged) return i;
  }
  return 0;
}

std::vector<MergeOp> MergeRun(const Snapshot& snapshot, size_t begin, size_t end) {
  end = std::min(end, snapshot.stack.size());
  if (end < begin + 2 || begin < FirstFree(snapshot)) return {};
  MergeOp op;
  op.output_level = kBoundedMergeLevel;
  op.inputs.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) op.inputs.push_back(snapshot.stack[i].id);
  std::vector<MergeOp> ops;
  ops.push_back(std::move(op));
  return ops;
}

namespace internal {

namespace {

constexpr uint64_t kMaxChoose = std::numeric_limits<uint64_t>::max();

struct PascalTable {
  uint64_t v[kPascalN * kPascalR] = {};
};

constexpr PascalTable MakePascal() {
  PascalTable t;
  for (uint64_t n = 0; n < kPascalN; ++n) {
    t.v[n * kPascalR] = 1;
    for (uint64_t r = 1; r <= n && r < kPascalR; ++r) {
      const uint64_t a = t.v[(n - 1) * kPascalR + r - 1];
      const uint64_t b = r <= n - 1 ? t.v[(n - 1) * kPascalR + r] : 0;
      t.v[n * kPascalR + r] = a > kMaxChoose - b ? kMaxChoose : a + b;
    }
  }
  return t;
}

constexpr PascalTable kTable = MakePascal();

}  // namespace

const uint64_t* const kPascal = kTable.v;

uint64_t ChooseSlow(uint64_t n, uint64_t r) {
  uint64_t c = 1;
  for (uint64_t i = 1; i <= r; ++i) {
    // c = C(n - r + i - 1, i - 1) here, so the division is exact.
    uint64_t product;
    if (!__builtin_mul_overflow(c, n - r + i, &product)) {
      c = product / i;
      continue;
    }
    const unsigned __int128 wide = static_cast<unsigned __int128>(c) * (n - r + i) / i;
    if (wide > kMaxChoose) return kMaxChoose;
    c = static_cast<uint64_t>(wide);
  }
  return c;
}

}  // namespace internal

}  // namespace lsm::policy
