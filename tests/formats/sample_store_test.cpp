// The compact sample store: every sample decodes as it was added, whatever its values, and
// copies share the encoded data without seeing each other's later samples.
#include "formats/sample_store.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "formats/profile.hpp"

namespace dapprof::formats {
namespace {

// Weights compared by their bits: NaN and -0.0 must come back as they went in.
void expect_same(const Sample& got, const Sample& want, std::size_t i) {
  ASSERT_EQ(got.thread, want.thread) << "sample " << i;
  ASSERT_EQ(got.stack, want.stack) << "sample " << i;
  ASSERT_EQ(got.time_us, want.time_us) << "sample " << i;
  ASSERT_EQ(std::bit_cast<std::uint64_t>(got.weight), std::bit_cast<std::uint64_t>(want.weight))
      << "sample " << i;
  ASSERT_EQ(got.state, want.state) << "sample " << i;
}

void expect_decodes_to(const SampleStore& store, const std::vector<Sample>& want) {
  ASSERT_EQ(store.size(), want.size());
  std::size_t i = 0;
  for (const auto& s : store) {
    ASSERT_LT(i, want.size());
    expect_same(s, want[i], i);
    ++i;
  }
  EXPECT_EQ(i, want.size());
}

// Mostly what a sampler gives (steady times, few threads and stacks, weight 1), with every
// awkward value mixed in: times far apart both ways and at the int64 limits, indices near 2^32,
// weights that are not 1, NaN, negative zero.
std::vector<Sample> random_samples(std::size_t count, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](std::uint64_t n) { return rng() % n; };
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  const double weights[] = {0.0,   -0.0,  2.0,          0.5,
                            -3.25, 1e300, std::nan(""), std::numeric_limits<double>::infinity()};
  std::vector<Sample> out;
  std::int64_t t = 0;
  for (std::size_t i = 0; i < count; ++i) {
    Sample s;
    switch (pick(20)) {
      case 0:
        t = kMin + static_cast<std::int64_t>(pick(3));
        break;
      case 1:
        t = kMax - static_cast<std::int64_t>(pick(3));
        break;
      case 2:
        t = static_cast<std::int64_t>(rng());
        break;
      case 3:  // wrapping past kMin, as unsigned arithmetic does (signed overflow is undefined)
        t = static_cast<std::int64_t>(static_cast<std::uint64_t>(t) - pick(1'000'000));
        break;
      default:  // and past kMax
        t = static_cast<std::int64_t>(static_cast<std::uint64_t>(t) + pick(2000));
        break;
    }
    s.time_us = t;
    s.thread =
        pick(10) == 0 ? static_cast<std::uint32_t>(rng()) : static_cast<std::uint32_t>(pick(300));
    s.stack =
        pick(10) == 0 ? static_cast<std::uint32_t>(rng()) : static_cast<std::uint32_t>(pick(200));
    s.weight = pick(8) == 0 ? weights[pick(std::size(weights))] : 1.0;
    const auto bits = pick(8);  // every combination, the impossible ones too
    s.state = {.known = (bits & 1) != 0, .active = (bits & 2) != 0, .gil = (bits & 4) != 0};
    out.push_back(s);
  }
  return out;
}

TEST(SampleStore, LargeRandomSequenceRoundTrips) {
  const auto want = random_samples(300'000, 1);
  SampleStore store;
  double total = 0;
  std::int64_t latest = want.front().time_us;
  for (const auto& s : want) {
    store.add(s);
    total += s.weight;
    latest = std::max(latest, s.time_us);
  }
  expect_decodes_to(store, want);
  // Summed in the same order, so the same double, NaN included.
  EXPECT_EQ(std::bit_cast<std::uint64_t>(store.total_weight()),
            std::bit_cast<std::uint64_t>(total));
  EXPECT_EQ(store.latest_time_us(), latest);
  EXPECT_GT(store.encoded_bytes(), 3 * SampleStore::kBlockBytes);  // several blocks were filled
}

TEST(SampleStore, EmptyStore) {
  const SampleStore store;
  EXPECT_TRUE(store.empty());
  EXPECT_EQ(store.begin(), store.end());
  EXPECT_EQ(store.latest_time_us(), std::nullopt);
  EXPECT_EQ(store.total_weight(), 0);
}

TEST(SampleStore, SteadySamplingTakesFourBytesASample) {
  SampleStore store;
  for (std::int64_t i = 0; i < 100'000; ++i) {
    // As a sampler gives them: each with its thread's state.
    store.add({.thread = static_cast<std::uint32_t>(i % 4),
               .stack = static_cast<std::uint32_t>(i % 100),
               .time_us = i * 1000,
               .state = {.known = true, .active = i % 3 != 0, .gil = i % 3 == 1}});
  }
  EXPECT_LE(store.encoded_bytes(), 4 * store.size());
}

TEST(SampleStore, CopiesShareDataButNotLaterSamples) {
  const auto want = random_samples(50'000, 2);
  SampleStore original;
  for (std::size_t i = 0; i < 40'000; ++i) original.add(want[i]);
  SampleStore copy = original;
  for (std::size_t i = 40'000; i < want.size(); ++i) original.add(want[i]);
  const std::vector<Sample> first(want.begin(), want.begin() + 40'000);
  expect_decodes_to(copy, first);
  expect_decodes_to(original, want);

  // The copy goes on from where it was, on its own.
  auto other = random_samples(1'000, 3);
  for (const auto& s : other) copy.add(s);
  auto both = first;
  both.insert(both.end(), other.begin(), other.end());
  expect_decodes_to(copy, both);
  expect_decodes_to(original, want);
}

TEST(SampleStore, IteratorsCopyAndCompare) {
  SampleStore store;
  const Sample a{.thread = 1, .stack = 2, .time_us = 3};
  const Sample b{.thread = 4, .stack = 5, .time_us = 6, .weight = 7, .state = {.known = true}};
  store.add(a);
  store.add(b);
  auto it = store.begin();
  const auto first = it++;
  EXPECT_EQ(first->thread, 1u);
  EXPECT_EQ(it->weight, 7);
  EXPECT_NE(first, it);
  EXPECT_EQ(++it, store.end());
  const std::vector<Sample> all(store.begin(), store.end());
  EXPECT_EQ(all, (std::vector<Sample>{a, b}));
}

TEST(ProfileSamples, RandomProfileRoundTripsWithRunningTotals) {
  Profile p;
  p.interval_us = 1000;
  for (std::uint64_t t = 0; t < 300; ++t) p.add_thread({1, t, 1000 + t, ""});
  const std::vector<model::Frame> one = {{"f", "a.py", 1, model::FrameKind::Python, ""}};
  for (int i = 0; i < 200; ++i) {
    auto frames = one;
    frames[0].line = i;
    p.add_stack(frames);
  }
  auto want = random_samples(100'000, 4);
  double total = 0;
  for (auto& s : want) {
    total += s.weight;
    s.thread %= 300;
    s.stack %= 200;
    s.time_us %= 1'000'000'000'000;  // end_us() adds interval_us: keep clear of overflow
    p.add_sample(s.thread, s.stack, s.time_us, s.weight, s.state);
  }
  expect_decodes_to(p.samples(), want);
  std::int64_t end = p.duration_us;
  for (const auto& s : want) end = std::max(end, s.time_us + p.interval_us);
  EXPECT_EQ(p.end_us(), end);
  p.duration_us = end + 1;
  EXPECT_EQ(p.end_us(), end + 1);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(p.total_weight()), std::bit_cast<std::uint64_t>(total));
}

}  // namespace
}  // namespace dapprof::formats
