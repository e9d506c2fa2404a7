#include "app/cli/format_names.hpp"

#include <gtest/gtest.h>

namespace dapprof::app::cli {
namespace {

using model::ProfileFormat;

TEST(RecordFormatNames, PySpysNamesPlusCpuprofilePprofAndGecko) {
  EXPECT_EQ(parse_format("speedscope"), ProfileFormat::Speedscope);
  EXPECT_EQ(parse_format("flamegraph"), ProfileFormat::Flamegraph);
  EXPECT_EQ(parse_format("raw"), ProfileFormat::Collapsed);
  EXPECT_EQ(parse_format("chrometrace"), ProfileFormat::ChromeTrace);
  EXPECT_EQ(parse_format("cpuprofile"), ProfileFormat::Cpuprofile);
  EXPECT_EQ(parse_format("pprof"), ProfileFormat::Pprof);
  EXPECT_EQ(parse_format("gecko"), ProfileFormat::Gecko);
  EXPECT_FALSE(parse_format("svg").has_value());
  EXPECT_FALSE(parse_format("collapsed").has_value());  // the protocol's name, not the CLI's
}

TEST(RecordFormatNames, InTheOrderHelpListsThem) {
  EXPECT_EQ(format_names(),
            (std::vector<std::string>{"flamegraph", "speedscope", "raw", "chrometrace",
                                      "cpuprofile", "pprof", "gecko"}));
}

}  // namespace
}  // namespace dapprof::app::cli
