// pprof: the written bytes, inflated and parsed with the classes protoc generated from pprof's
// profile.proto, hold the profile's samples, stacks and threads.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "formats/writers.hpp"
#include "gunzip.hpp"
#include "profile.pb.h"
#include "sample_profile.hpp"

namespace dapprof::formats {
namespace {

namespace pb = perftools::profiles;

pb::Profile parsed(const Profile& profile) {
  const auto bytes = to_string(model::ProfileFormat::Pprof, profile);
  EXPECT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);  // gzip's magic
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  pb::Profile message;
  EXPECT_TRUE(message.ParseFromString(test::gunzip(bytes)));
  return message;
}

TEST(Pprof, StructureAndValues) {
  const auto inputs = test::sample_inputs();
  const auto profile = test::make_profile(inputs);
  const auto p = parsed(profile);
  const auto str = [&](std::int64_t i) {
    EXPECT_GE(i, 0);
    EXPECT_LT(i, p.string_table_size());
    return p.string_table(static_cast<int>(i));
  };

  ASSERT_GT(p.string_table_size(), 0);
  EXPECT_EQ(p.string_table(0), "");
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(str(p.sample_type(0).type()), "samples");
  EXPECT_EQ(str(p.sample_type(0).unit()), "count");
  EXPECT_EQ(str(p.sample_type(1).type()), "cpu");
  EXPECT_EQ(str(p.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(str(p.period_type().type()), "cpu");
  EXPECT_EQ(str(p.period_type().unit()), "nanoseconds");
  EXPECT_EQ(p.period(), profile.interval_us * 1000);
  EXPECT_EQ(p.duration_nanos(), profile.end_us() * 1000);

  std::map<std::uint64_t, const pb::Function*> functions;
  for (const auto& f : p.function()) {
    EXPECT_NE(f.id(), 0u);
    EXPECT_TRUE(functions.emplace(f.id(), &f).second) << "duplicate function id " << f.id();
  }
  std::map<std::uint64_t, const pb::Location*> locations;
  for (const auto& l : p.location()) {
    EXPECT_NE(l.id(), 0u);
    EXPECT_TRUE(locations.emplace(l.id(), &l).second) << "duplicate location id " << l.id();
    ASSERT_EQ(l.line_size(), 1);
    EXPECT_TRUE(functions.contains(l.line(0).function_id()));
  }
  // One function per (name, file): "wörk" at one line and "函数" share a file, not a function.
  std::set<std::pair<std::string, std::string>> names;
  for (const auto& [id, f] : functions) names.emplace(str(f->name()), str(f->filename()));
  EXPECT_EQ(names.size(), functions.size());
  EXPECT_TRUE(names.contains({test::work_frame().function, test::work_frame().file}));

  // Each sample: its stack (innermost first) as frames, its thread's labels, and the value
  // count × interval. Summed back per (thread, root-first stack), they are the inputs.
  using Key = std::tuple<pid_t, std::string, std::vector<std::string>>;
  std::map<Key, std::int64_t> got, want;
  for (const auto& in : inputs) {
    std::vector<std::string> frames;
    for (const auto& f : in.root_first) frames.push_back(f.function + "@" + std::to_string(f.line));
    const auto name = in.thread_name.empty() ? "thread 0x7f03" : in.thread_name;
    want[{in.pid, name, frames}] += static_cast<std::int64_t>(in.weight);
  }
  std::int64_t total = 0;
  for (const auto& s : p.sample()) {
    ASSERT_EQ(s.value_size(), 2);
    EXPECT_EQ(s.value(1), s.value(0) * p.period());
    total += s.value(0);
    std::vector<std::string> frames;
    for (auto it = s.location_id().rbegin(); it != s.location_id().rend(); ++it) {
      ASSERT_TRUE(locations.contains(*it));
      const auto& line = locations[*it]->line(0);
      frames.push_back(str(functions[line.function_id()]->name()) + "@" +
                       std::to_string(line.line()));
    }
    std::map<std::string, const pb::Label*> labels;
    for (const auto& l : s.label()) labels[str(l.key())] = &l;
    ASSERT_TRUE(labels.contains("thread") && labels.contains("pid") && labels.contains("tid"));
    EXPECT_NE(labels["tid"]->num(), 0);
    got[{static_cast<pid_t>(labels["pid"]->num()), str(labels["thread"]->str()), frames}] +=
        s.value(0);
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(total, static_cast<std::int64_t>(profile.total_weight()));
}

TEST(Pprof, FunctionStartLineAndNativeModule) {
  Profile profile;
  model::Frame python{"f", "app.py", 12, model::FrameKind::Python, ""};
  python.first_line = 10;
  const model::Frame native{"memcpy", "", 0, model::FrameKind::Native, "/lib/libc.so.6"};
  const std::vector<model::Frame> stack = {native, python};  // innermost first
  profile.add_sample(profile.add_thread({1, 2, 3, "T"}), profile.add_stack(stack), 0);
  const auto p = parsed(profile);
  std::map<std::string, std::pair<std::string, std::int64_t>> by_name;
  for (const auto& f : p.function())
    by_name[p.string_table(static_cast<int>(f.name()))] = {
        p.string_table(static_cast<int>(f.filename())), f.start_line()};
  EXPECT_EQ(by_name["f"], (std::pair<std::string, std::int64_t>{"app.py", 10}));
  EXPECT_EQ(by_name["memcpy"].first, "/lib/libc.so.6");
}

TEST(Pprof, EmptyProfileIsValid) {
  const auto p = parsed(Profile{});
  EXPECT_EQ(p.sample_size(), 0);
  EXPECT_EQ(p.string_table(0), "");
}

}  // namespace
}  // namespace dapprof::formats
