// Dataset loaders and preparation on the real UEA files in ../shared and on
// small fixtures made from them by an independent Python parser
// (tests/fixtures/gen/dataset_fixtures.py), plus broken files.

#include "app/core/dataset.h"

#include <gtest/gtest.h>

#include <QTemporaryDir>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>

#include "engine/tools/npy.h"

namespace gruwb::app {
namespace {

const std::string kData = std::string(GRUWB_SHARED_DIR) + "/data/datasets/";
const std::string kFixtures = std::string(GRUWB_SOURCE_DIR) + "/tests/fixtures/datasets/";

std::vector<int> counts_by_name(const Dataset& d, const std::vector<std::string>& names) {
  std::vector<int> out;
  const std::vector<int> counts = d.class_counts();
  for (const std::string& name : names) {
    int c = -1;
    for (size_t i = 0; i < d.class_names.size(); ++i) {
      if (d.class_names[i] == name) c = counts[i];
    }
    out.push_back(c);
  }
  return out;
}

TEST(DatasetTs, EpilepsyShapesAndClassCounts) {
  DatasetFiles files;
  std::string error;
  ASSERT_TRUE(load_dataset(kData + "Epilepsy", &files, &error)) << error;
  EXPECT_EQ(files.train.name, "Epilepsy");
  EXPECT_EQ(files.train.size(), 137);
  EXPECT_EQ(files.test.size(), 138);
  EXPECT_EQ(files.train.channels, 3);
  EXPECT_EQ(files.train.min_length(), 206);
  EXPECT_EQ(files.test.max_length(), 206);
  EXPECT_EQ(files.train.class_names,
            (std::vector<std::string>{"EPILEPSY", "WALKING", "RUNNING", "SAWING"}));
  // The dataset README's counts (EPILEPSY, RUNNING, SAWING, WALKING).
  const std::vector<std::string> names = {"EPILEPSY", "RUNNING", "SAWING", "WALKING"};
  EXPECT_EQ(counts_by_name(files.train, names), (std::vector<int>{34, 36, 30, 37}));
  EXPECT_EQ(counts_by_name(files.test, names), (std::vector<int>{34, 37, 30, 37}));
  EXPECT_EQ(files.train.missing_values, 0);
  // Values lie in the clipped range [-3.59, 3.59].
  float lo = 0, hi = 0;
  for (const auto& s : files.train.series) {
    for (float v : s) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  EXPECT_FLOAT_EQ(lo, -3.59f);
  EXPECT_FLOAT_EQ(hi, 3.59f);
}

TEST(DatasetTs, RacketSportsAndBasicMotions) {
  DatasetFiles files;
  std::string error;
  ASSERT_TRUE(load_dataset(kData + "RacketSports/RacketSports_TRAIN.ts", &files, &error)) << error;
  EXPECT_EQ(files.train.size(), 151);
  EXPECT_EQ(files.test.size(), 152);
  EXPECT_EQ(files.train.channels, 6);
  EXPECT_EQ(files.train.max_length(), 30);
  const std::vector<std::string> names = {"Badminton_Clear", "Badminton_Smash",
                                          "Squash_BackhandBoast", "Squash_ForehandBoast"};
  EXPECT_EQ(counts_by_name(files.train, names), (std::vector<int>{43, 39, 34, 35}));
  EXPECT_EQ(counts_by_name(files.test, names), (std::vector<int>{43, 40, 34, 35}));

  ASSERT_TRUE(load_dataset(kData + "BasicMotions", &files, &error)) << error;
  EXPECT_EQ(files.train.size(), 40);
  EXPECT_EQ(files.test.size(), 40);
  EXPECT_EQ(files.train.channels, 6);
  EXPECT_EQ(files.train.max_length(), 100);
  EXPECT_EQ(files.train.class_counts(), (std::vector<int>{10, 10, 10, 10}));
  // The first value of the first training case, as written in the file.
  EXPECT_FLOAT_EQ(files.train.series[0][0], 0.079106f);
}

TEST(DatasetArff, BasicMotionsEqualsTs) {
  for (const char* split : {"TRAIN", "TEST"}) {
    Dataset ts, arff;
    std::string error;
    ASSERT_TRUE(load_ts(kData + "BasicMotions/BasicMotions_" + split + ".ts", &ts, &error))
        << error;
    ASSERT_TRUE(load_arff(kData + "BasicMotions/BasicMotions_" + split + ".arff", &arff, &error))
        << error;
    EXPECT_EQ(arff.name, "BasicMotions");
    EXPECT_EQ(arff.class_names, ts.class_names);
    EXPECT_EQ(arff.labels, ts.labels);
    EXPECT_EQ(arff.lengths, ts.lengths);
    EXPECT_EQ(arff.channels, 6);
    ASSERT_EQ(arff.series.size(), ts.series.size());
    for (size_t i = 0; i < ts.series.size(); ++i) EXPECT_EQ(arff.series[i], ts.series[i]) << i;
  }
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(DatasetTs, UnequalLengthMissingTimestampsAndCrlf) {
  QTemporaryDir dir;
  const std::string path = dir.path().toStdString() + "/Toy_TRAIN.ts";
  write(
      path,
      "# comment with UTF-8 \xc3\xa9\r\n@problemName Toy\r\n@TIMESTAMPS false\r\n@missing true\r\n"
      "@univariate false\r\n@dimensions 2\r\n@equalLength false\r\n"
      "@classLabel true b a\r\n@data\r\n"
      "1,2,3:4,?,6:a\r\n\r\n7,8:9,10:b\r\n");
  Dataset d;
  std::string error;
  ASSERT_TRUE(load_ts(path, &d, &error)) << error;
  EXPECT_EQ(d.name, "Toy");
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"b", "a"}));  // header order, not sorted
  EXPECT_EQ(d.labels, (std::vector<int>{1, 0}));
  EXPECT_EQ(d.lengths, (std::vector<int>{3, 2}));
  EXPECT_FALSE(d.equal_length());
  EXPECT_EQ(d.missing_values, 1);
  EXPECT_FLOAT_EQ(d.series[0][0], 1);  // time-major: t0 c0, t0 c1, t1 c0 ...
  EXPECT_FLOAT_EQ(d.series[0][1], 4);
  EXPECT_TRUE(std::isnan(d.series[0][3]));
  EXPECT_FLOAT_EQ(d.series[1][3], 10);

  const std::string stamped = dir.path().toStdString() + "/Stamped.ts";
  write(stamped,
        "@problemName S\n@timeStamps true\n@univariate true\n@equalLength true\n@seriesLength 2\n"
        "@classLabel true x y\n@data\n(2020-01-01 00:00:00,1.5),(2020-01-01 00:00:01,2.5):y\n");
  ASSERT_TRUE(load_ts(stamped, &d, &error)) << error;
  EXPECT_EQ(d.series[0], (std::vector<float>{1.5f, 2.5f}));
  EXPECT_EQ(d.labels, (std::vector<int>{1}));
}

// Broken files: each error names file:line:column and the problem.
TEST(DatasetTs, BrokenFilesNameLineAndColumn) {
  QTemporaryDir dir;
  const std::string path = dir.path().toStdString() + "/bad.ts";
  const std::string head = "@problemName B\n@dimensions 2\n@classLabel true a b\n@data\n";
  struct Case {
    std::string body;
    std::string expected;
  };
  const Case cases[] = {
      {head + "1,2:3,4:a\n1,x:3,4:b\n", "bad.ts:6:3: not a number: 'x'"},
      {head + "1,2:3,4:c\n", "bad.ts:5:9: label 'c' is not in @classLabel"},
      {head + "1,2:3:a\n", "bad.ts:5:1: channel 1 has 1 values, channel 0 has 2"},
      {head + "1,2:a\n", "bad.ts:5:1: case has 1 channels, @dimensions is 2"},
      {head + "1,2,3\n", "bad.ts:5:1: expected 'values:LABEL'"},
      {"@problemName B\n@dimensions two\n", "bad.ts:2:1: @dimensions 'two': expected a positive"},
      {"@problemName B\n@targetLabel true\n@data\n", "regression datasets"},
      {"@problemName B\n@foo 1\n", "bad.ts:2:1: unknown header key @foo"},
      {"@problemName B\n", "no @data section"},
      {"hello\n", "bad.ts:1:1: expected a header line"},
      {head, "no cases after @data"},
  };
  for (const Case& c : cases) {
    write(path, c.body);
    Dataset d;
    std::string error;
    EXPECT_FALSE(load_ts(path, &d, &error)) << c.body;
    EXPECT_NE(error.find(c.expected), std::string::npos) << error;
  }
  Dataset d;
  std::string error;
  EXPECT_FALSE(load_ts(dir.path().toStdString() + "/missing.ts", &d, &error));
  EXPECT_NE(error.find("missing.ts: cannot open file"), std::string::npos) << error;
}

TEST(DatasetArff, BrokenFiles) {
  QTemporaryDir dir;
  const std::string path = dir.path().toStdString() + "/bad.arff";
  const std::string head =
      "@relation r\n@attribute rel relational\n@attribute a0 numeric\n@attribute a1 numeric\n"
      "@end rel\n@attribute c {x,y}\n@data\n";
  write(path, head + "'1,2\\n3,4',x\n'1,2\\n3,q',y\n");
  Dataset d;
  std::string error;
  EXPECT_FALSE(load_arff(path, &d, &error));
  EXPECT_NE(error.find("bad.arff:9:9: not a number: 'q'"), std::string::npos) << error;
  write(path, head + "'1,2\\n3,4',z\n");
  EXPECT_FALSE(load_arff(path, &d, &error));
  EXPECT_NE(error.find("bad.arff:8:12: class 'z'"), std::string::npos) << error;
  write(path, head + "'1,2,5\\n3,4,6',x\n");
  EXPECT_FALSE(load_arff(path, &d, &error));
  EXPECT_NE(error.find("3 values per channel, 2 numeric attributes"), std::string::npos) << error;
  write(path, head + "'1,2\\n3,4',x\n");
  ASSERT_TRUE(load_arff(path, &d, &error)) << error;
  EXPECT_EQ(d.series[0], (std::vector<float>{1, 3, 2, 4}));
}

void expect_same_cases(const Dataset& got, const Dataset& ts, int count) {
  ASSERT_GE(got.size(), count);
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(got.class_names[got.labels[i]], ts.class_names[ts.labels[i]]) << i;
    ASSERT_EQ(got.series[i].size(), ts.series[i].size());
    for (size_t k = 0; k < ts.series[i].size(); ++k) {
      ASSERT_FLOAT_EQ(got.series[i][k], ts.series[i][k]) << i << " " << k;
    }
  }
}

TEST(DatasetNumpyCsv, FixturesEqualTheTsFile) {
  Dataset train_ts, test_ts;
  std::string error;
  ASSERT_TRUE(load_ts(kData + "RacketSports/RacketSports_TRAIN.ts", &train_ts, &error)) << error;
  ASSERT_TRUE(load_ts(kData + "RacketSports/RacketSports_TEST.ts", &test_ts, &error)) << error;

  DatasetFiles files;
  ASSERT_TRUE(load_dataset(kFixtures + "racket_small.npz", &files, &error)) << error;  // deflated
  EXPECT_EQ(files.train.size(), 8);
  EXPECT_EQ(files.test.size(), 4);
  EXPECT_EQ(files.train.channels, 6);
  expect_same_cases(files.train, train_ts, 0);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(files.train.labels[i], train_ts.labels[i]);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(files.test.series[i], test_ts.series[i]);

  ASSERT_TRUE(load_dataset(kFixtures + "racket_small_stored.npz", &files, &error)) << error;
  EXPECT_FALSE(files.has_test());
  for (int i = 0; i < 8; ++i) EXPECT_EQ(files.train.series[i], train_ts.series[i]);

  ASSERT_TRUE(load_dataset(kFixtures + "racket_small_long.csv", &files, &error)) << error;
  EXPECT_EQ(files.train.size(), 8);
  EXPECT_EQ(files.test.size(), 4);
  EXPECT_EQ(files.train.max_length(), 30);
  expect_same_cases(files.train, train_ts, 8);
  expect_same_cases(files.test, test_ts, 4);

  ASSERT_TRUE(load_dataset(kFixtures + "racket_small_wide.csv", &files, &error)) << error;
  EXPECT_EQ(files.train.channels, 6);
  expect_same_cases(files.train, train_ts, 8);
}

TEST(DatasetNumpyCsv, NpyPairAndBrokenCsv) {
  QTemporaryDir dir;
  const std::string d = dir.path().toStdString() + "/";
  write(d + "a.csv", "id,label,x\n1,a,0.5\n1,b,0.7\n");
  DatasetFiles files;
  std::string error;
  EXPECT_FALSE(load_dataset(d + "a.csv", &files, &error));
  EXPECT_NE(error.find("a.csv:3:3: sample '1' changes its label (first row: line 2)"),
            std::string::npos)
      << error;
  write(d + "b.csv", "id,x\n1,0.5\n");
  EXPECT_FALSE(load_dataset(d + "b.csv", &files, &error));
  EXPECT_NE(error.find("b.csv:1:1: no label column"), std::string::npos) << error;
  write(d + "c.csv", "label;x_0;x_1\na;1;2\nb;3;zz\n");
  EXPECT_FALSE(load_dataset(d + "c.csv", &files, &error));
  EXPECT_NE(error.find("c.csv:3:5: column 'x_1': not a number: 'zz'"), std::string::npos) << error;
  write(d + "d.csv", "label,x\na,1,2\n");
  EXPECT_FALSE(load_dataset(d + "d.csv", &files, &error));
  EXPECT_NE(error.find("d.csv:2:1: row has 3 fields, the header has 2"), std::string::npos)
      << error;
  write(d + "e.npz", "PK not a zip");
  EXPECT_FALSE(load_dataset(d + "e.npz", &files, &error));
  EXPECT_NE(error.find("e.npz: not a valid .npz"), std::string::npos) << error;
  EXPECT_FALSE(load_dataset(d + "nothing.ts", &files, &error));
  EXPECT_NE(error.find("no such file"), std::string::npos) << error;
  EXPECT_FALSE(load_dataset(dir.path().toStdString(), &files, &error));
  EXPECT_NE(error.find("_TRAIN.ts"), std::string::npos) << error;
}

tools::NpyArray float_array(std::vector<int64_t> shape, const std::vector<float>& values) {
  tools::NpyArray array;
  array.dtype = "<f4";
  array.shape = std::move(shape);
  array.data.resize(values.size() * 4);
  std::memcpy(array.data.data(), values.data(), array.data.size());
  return array;
}

// An all-NaN one-hot row arg-maxed to class 0; Inf in X was taken while `train` refused it.
TEST(DatasetNumpyCsv, NonFiniteLabelsAndInfiniteInputsAreNamed) {
  QTemporaryDir dir;
  const std::string d = dir.path().toStdString() + "/";
  std::string error;
  const float nan = std::nanf("");
  const float inf = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(tools::write_npy(d + "x.npy", float_array({2, 3}, {1, 2, 3, 4, nan, 6}), &error));
  ASSERT_TRUE(tools::write_npy(d + "y_nan.npy", float_array({2, 2}, {0, 1, nan, nan}), &error));
  DatasetFiles files;
  EXPECT_FALSE(load_dataset(d + "x.npy," + d + "y_nan.npy", &files, &error));
  EXPECT_NE(error.find("y_nan.npy: element 2 is not a finite number (NaN)"), std::string::npos)
      << error;
  ASSERT_TRUE(tools::write_npy(d + "y.npy", float_array({2, 2}, {0, 1, 1, 0}), &error));
  EXPECT_TRUE(load_dataset(d + "x.npy," + d + "y.npy", &files, &error)) << error;  // NaN: missing
  ASSERT_TRUE(tools::write_npy(d + "x_inf.npy", float_array({2, 3}, {1, 2, 3, 4, inf, 6}), &error));
  EXPECT_FALSE(load_dataset(d + "x_inf.npy," + d + "y.npy", &files, &error));
  EXPECT_NE(error.find("x_inf.npy: element 4 is not a finite number (infinite)"), std::string::npos)
      << error;
}

// A hand-made zip file: little-endian fields and raw bytes.
struct ZipBytes {
  std::string bytes;
  void u16(uint32_t v) {
    bytes += static_cast<char>(v & 0xff);
    bytes += static_cast<char>((v >> 8) & 0xff);
  }
  void u32(uint64_t v) {
    u16(static_cast<uint32_t>(v & 0xffff));
    u16(static_cast<uint32_t>((v >> 16) & 0xffff));
  }
};

// A zip64 local-header offset near 2^64 wrapped the bounds check: the reader read before its
// buffer.
TEST(DatasetNumpyCsv, NpzWithAWrappingMemberOffsetIsRefused) {
  ZipBytes zip;
  const std::string name = "x.npy";
  zip.u32(0x02014b50);                                 // central directory entry
  for (uint32_t v : {20, 20, 0, 0, 0, 0}) zip.u16(v);  // versions, flags, stored, time, date
  for (uint64_t v : {0, 4, 4}) zip.u32(v);             // crc, sizes
  for (uint32_t v : {5, 12, 0, 0, 0}) zip.u16(v);      // name, extra, comment, disk, attributes
  zip.u32(0);
  zip.u32(0xffffffffu);  // local header offset: in the zip64 extra
  zip.bytes += name;
  zip.u16(1);  // zip64 extra: offset 2^64 - 16
  zip.u16(8);
  zip.u32(0xfffffff0u);
  zip.u32(0xffffffffu);
  const uint32_t directory_bytes = static_cast<uint32_t>(zip.bytes.size());
  zip.u32(0x06054b50);  // end of central directory: 1 entry at offset 0
  for (uint32_t v : {0, 0, 1, 1}) zip.u16(v);
  zip.u32(directory_bytes);
  zip.u32(0);
  zip.u16(0);
  QTemporaryDir dir;
  const std::string path = dir.path().toStdString() + "/wrapped.npz";
  write(path, zip.bytes);
  DatasetFiles files;
  std::string error;
  EXPECT_FALSE(load_dataset(path, &files, &error));
  EXPECT_NE(error.find("wrapped.npz: not a valid .npz (zip) file: member x.npy truncated"),
            std::string::npos)
      << error;
}

// Found by dataset_npz_fuzz in CI: a zip64 end-of-directory record at an offset near 2^64 wrapped
// the reads after it, and a central directory entry was then read one byte before the buffer.
TEST(DatasetNumpyCsv, NpzWithAWrappingZip64DirectoryIsRefused) {
  static const char kFound[] =
      "\x55\xef\xbb\xbf\x04\x01\x00\x00\x00\x20\x01\x00\x04\xff\xff\xff"
      "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
      "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
      "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
      "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
      "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
      "\xff\x20\x01\x00\x50\x4b\x05\x06\xff\xff\xff\xff\xff\xff\xff\xff"
      "\x7f\xff\xff\xf7\xff\xff\xff\xff\xff\xff\xff\xff\xff\x00";
  QTemporaryDir dir;
  const std::string path = dir.path().toStdString() + "/found.npz";
  write(path, std::string(kFound, sizeof kFound - 1));
  DatasetFiles files;
  std::string error;
  EXPECT_FALSE(load_dataset(path, &files, &error));
  EXPECT_NE(error.find("found.npz: not a valid .npz (zip) file: bad zip64 directory"),
            std::string::npos)
      << error;
}

// Found by dataset_npz_fuzz: a member of 4 bytes that claims 1 GB made the reader allocate and
// zero it (2.2 GB resident) before anything failed. In CI a deflated one; later a stored one
// (whose two sizes differ) and one of an unknown compression method.
std::string npz_bomb_error(uint32_t method) {
  ZipBytes zip;
  const std::string name = "x.npy";
  const uint64_t claimed = 1u << 30;
  zip.u32(0x04034b50);                                      // local header
  for (uint32_t v : {20u, 0u, method, 0u, 0u}) zip.u16(v);  // version, flags, method, time, date
  for (uint64_t v : {uint64_t{0}, uint64_t{4}, claimed}) zip.u32(v);  // crc, sizes
  for (uint32_t v : {5, 0}) zip.u16(v);                               // name, extra
  zip.bytes += name;
  zip.bytes += std::string("\x03\x00\x00\x00", 4);  // 4 bytes of data
  const uint32_t directory_at = static_cast<uint32_t>(zip.bytes.size());
  zip.u32(0x02014b50);                                           // central directory entry
  for (uint32_t v : {20u, 20u, 0u, method, 0u, 0u}) zip.u16(v);  // versions, flags, method, ...
  for (uint64_t v : {uint64_t{0}, uint64_t{4}, claimed}) zip.u32(v);
  for (uint32_t v : {5, 0, 0, 0, 0}) zip.u16(v);  // name, extra, comment, disk, attributes
  zip.u32(0);
  zip.u32(0);  // local header offset
  zip.bytes += name;
  const uint32_t directory_bytes = static_cast<uint32_t>(zip.bytes.size()) - directory_at;
  zip.u32(0x06054b50);  // end of central directory: 1 entry
  for (uint32_t v : {0, 0, 1, 1}) zip.u16(v);
  zip.u32(directory_bytes);
  zip.u32(directory_at);
  zip.u16(0);
  QTemporaryDir dir;
  const std::string path = dir.path().toStdString() + "/bomb.npz";
  write(path, zip.bytes);
  DatasetFiles files;
  std::string error;
  EXPECT_FALSE(load_dataset(path, &files, &error));
  return error;
}

TEST(DatasetNumpyCsv, NpzWithAnImpossibleMemberSizeIsRefused) {
  const std::string prefix = "bomb.npz: not a valid .npz (zip) file: ";
  std::string error = npz_bomb_error(8);
  EXPECT_NE(error.find(prefix + "member x.npy claims 1073741824 bytes from 4 compressed, more "
                                "than deflate can produce"),
            std::string::npos)
      << error;
  error = npz_bomb_error(0);
  EXPECT_NE(error.find(prefix + "stored member x.npy has two sizes"), std::string::npos) << error;
  error = npz_bomb_error(99);
  EXPECT_NE(error.find(prefix + "member x.npy uses compression method 99"), std::string::npos)
      << error;
}

TEST(DatasetPrepare, NormalisationFittedOnTrainingOnly) {
  DatasetFiles files;
  std::string error;
  ASSERT_TRUE(load_dataset(kData + "RacketSports", &files, &error)) << error;
  PrepareOptions options;
  options.validation_fraction = 0.2;
  options.seed = 7;
  PreparedData data;
  ASSERT_TRUE(prepare_dataset(files, options, &data, &error)) << error;
  EXPECT_EQ(data.timesteps, 30);
  EXPECT_EQ(data.features, 6);
  EXPECT_EQ(data.train.size() + data.validation.size(), 151);
  EXPECT_EQ(data.validation.size(), 31);  // stratified: round(0.2 x 43, 39, 34, 35) = 9+8+7+7
  EXPECT_EQ(data.test.size(), 152);
  // The training split is normalised to mean 0, variance 1 per channel; the
  // test split is not (its statistics were not used).
  for (int c = 0; c < 6; ++c) {
    double sum = 0, squares = 0, test_sum = 0;
    const size_t n = data.train.x.size() / 6;
    for (size_t k = 0; k < n; ++k) sum += data.train.x[k * 6 + c];
    for (size_t k = 0; k < n; ++k) squares += std::pow(data.train.x[k * 6 + c] - sum / n, 2);
    for (size_t k = 0; k < data.test.x.size() / 6; ++k) test_sum += data.test.x[k * 6 + c];
    EXPECT_NEAR(sum / n, 0.0, 1e-5);
    EXPECT_NEAR(squares / n, 1.0, 1e-4);
    EXPECT_GT(std::abs(test_sum / (data.test.x.size() / 6)), 1e-4);
  }
  // Same seed, same split; another seed, another split.
  PreparedData again, other;
  ASSERT_TRUE(prepare_dataset(files, options, &again, &error));
  EXPECT_EQ(again.validation.labels, data.validation.labels);
  EXPECT_EQ(again.validation.x, data.validation.x);
  options.seed = 8;
  ASSERT_TRUE(prepare_dataset(files, options, &other, &error));
  EXPECT_NE(other.validation.x, data.validation.x);
}

TEST(DatasetPrepare, LengthPolicies) {
  DatasetFiles files;
  std::string error;
  ASSERT_TRUE(load_dataset(kData + "Epilepsy", &files, &error)) << error;
  PrepareOptions options;
  options.timesteps = 60;
  options.normalize_data = false;
  PreparedData data;
  EXPECT_FALSE(prepare_dataset(files, options, &data, &error));
  EXPECT_NE(error.find("has 206 steps, the model takes 60 (choose a length policy"),
            std::string::npos)
      << error;
  options.length_policy = LengthPolicy::kCrop;
  ASSERT_TRUE(prepare_dataset(files, options, &data, &error)) << error;
  EXPECT_EQ(data.train.x.size(), 137u * 60 * 3);
  EXPECT_EQ(std::vector<float>(data.train.x.begin(), data.train.x.begin() + 180),
            std::vector<float>(files.train.series[0].begin(), files.train.series[0].begin() + 180));
  options.length_policy = LengthPolicy::kResample;
  ASSERT_TRUE(prepare_dataset(files, options, &data, &error)) << error;
  const std::vector<float>& s = files.train.series[0];
  // Step 1 of 60 sits at 205/59 = 3.4746 of the original steps.
  const double w = 205.0 / 59 - 3;
  EXPECT_NEAR(data.train.x[3], (1 - w) * s[9] + w * s[12], 1e-5);
  EXPECT_FLOAT_EQ(data.train.x[59 * 3], s[205 * 3]);
  bool noted = false;
  for (const std::string& note : data.notes) noted |= note == "length: resample 206 -> 60 steps";
  EXPECT_TRUE(noted);
  // Padding to 210 fills with the channel mean.
  options.timesteps = 210;
  options.length_policy = LengthPolicy::kPad;
  ASSERT_TRUE(prepare_dataset(files, options, &data, &error)) << error;
  EXPECT_FLOAT_EQ(data.train.x[209 * 3 + 1], data.mean[1]);
}

TEST(DatasetPrepare, TestSplitHeldOutWhenTheSourceHasNone) {
  DatasetFiles files;
  std::string error;
  ASSERT_TRUE(load_dataset(kFixtures + "racket_small_wide.csv", &files, &error)) << error;
  ASSERT_FALSE(files.has_test());
  PrepareOptions options;
  options.test_fraction = 0.25;
  PreparedData data;
  ASSERT_TRUE(prepare_dataset(files, options, &data, &error)) << error;
  EXPECT_EQ(data.train.size() + data.test.size(), 8);
  EXPECT_GE(data.test.size(), 1);
}

}  // namespace
}  // namespace gruwb::app
