// The Fashion-MNIST sample's IDX reader: Debian's dataset-fashion-mnist files (counts, sizes,
// labels, pixel sums checked against an independent Python reading), and malformed files.
#include <zlib.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "idx_reader.h"
#include "test_support.h"

using namespace fashion_mnist;

namespace {

// VKCNN_FASHION_MNIST_DIR, else where Debian's dataset-fashion-mnist package puts the files.
std::filesystem::path dataDirectory() {
  const char* dir = std::getenv("VKCNN_FASHION_MNIST_DIR");
  return dir && *dir ? dir : "/usr/share/datasets/fashion-mnist";
}

// Paths as narrow strings: the reader takes std::string, and a Windows path's native string is
// wide (no implicit conversion there).
std::string scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "vkcnn-test-idx";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

void writeFile(const std::string& path, const std::vector<uint8_t>& bytes, bool gzip) {
  if (gzip) {
    gzFile file = gzopen(path.c_str(), "wb");
    REQUIRE(file != nullptr);
    REQUIRE(gzwrite(file, bytes.data(), unsigned(bytes.size())) == int(bytes.size()));
    REQUIRE(gzclose(file) == Z_OK);
  } else {
    FILE* file = std::fopen(path.c_str(), "wb");
    REQUIRE(file != nullptr);
    if (!bytes.empty()) REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size());
    std::fclose(file);
  }
}

// An IDX file of unsigned bytes: header for `dimensions`, then `payload` as given (which may be
// made shorter or longer than the header says).
std::vector<uint8_t> idxBytes(const std::vector<uint32_t>& dimensions,
                              const std::vector<uint8_t>& payload, uint8_t type = 0x08) {
  std::vector<uint8_t> bytes = {0, 0, type, uint8_t(dimensions.size())};
  for (uint32_t d : dimensions) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(uint8_t(d >> shift));
  }
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return bytes;
}

uint64_t sum(const std::vector<uint8_t>& v) {
  return std::accumulate(v.begin(), v.end(), uint64_t(0));
}

std::array<uint32_t, 10> classCounts(const std::vector<uint8_t>& labels) {
  std::array<uint32_t, 10> counts{};
  uint32_t outOfRange = 0;
  for (uint8_t l : labels) l < 10 ? ++counts[l] : ++outOfRange;
  CHECK(outOfRange == 0);
  return counts;
}

}  // namespace

TEST_CASE("Debian's Fashion-MNIST files read with the published counts and sizes") {
  const auto dir = dataDirectory();
  if (!std::filesystem::exists(dir / "t10k-images-idx3-ubyte.gz")) {
    // Debian machines get the files from scripts/install-deps.sh (dataset-fashion-mnist); a
    // machine that only runs a carried build may lack them.
    const std::string why = "SKIPPED: no Fashion-MNIST files in " + dir.string() +
                            " (install dataset-fashion-mnist or set VKCNN_FASHION_MNIST_DIR)";
    MESSAGE(why);
    return;
  }

  SUBCASE("test set") {
    IdxImages images = readIdxImages((dir / "t10k-images-idx3-ubyte.gz").string());
    CHECK(images.count == 10000);
    CHECK(images.rows == 28);
    CHECK(images.columns == 28);
    REQUIRE(images.pixels.size() == size_t(10000) * 28 * 28);
    // Sums from Python's gzip + numpy reading of the same files.
    CHECK(sum(images.pixels) == 573469082);
    CHECK(std::accumulate(images.image(0), images.image(1), uint64_t(0)) == 33456);

    std::vector<uint8_t> labels = readIdxLabels((dir / "t10k-labels-idx1-ubyte.gz").string());
    REQUIRE(labels.size() == 10000);
    CHECK(std::vector<uint8_t>(labels.begin(), labels.begin() + 10) ==
          std::vector<uint8_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7});
    for (uint32_t count : classCounts(labels)) CHECK(count == 1000);
  }

  SUBCASE("training set") {
    IdxImages images = readIdxImages((dir / "train-images-idx3-ubyte.gz").string());
    CHECK(images.count == 60000);
    CHECK(images.rows == 28);
    CHECK(images.columns == 28);
    REQUIRE(images.pixels.size() == size_t(60000) * 28 * 28);
    CHECK(sum(images.pixels) == 3431114169ull);
    CHECK(std::accumulate(images.image(0), images.image(1), uint64_t(0)) == 76247);

    std::vector<uint8_t> labels = readIdxLabels((dir / "train-labels-idx1-ubyte.gz").string());
    REQUIRE(labels.size() == 60000);
    CHECK(labels[0] == 9);
    for (uint32_t count : classCounts(labels)) CHECK(count == 6000);
  }
}

TEST_CASE("IDX files: compressed or not, any rank") {
  std::vector<uint8_t> payload(2 * 3 * 5);
  std::iota(payload.begin(), payload.end(), uint8_t(7));
  for (bool gzip : {true, false}) {
    CAPTURE(gzip);
    auto path = scratch(gzip ? "images.gz" : "images");
    writeFile(path, idxBytes({2, 3, 5}, payload), gzip);
    IdxImages images = readIdxImages(path);
    CHECK(images.count == 2);
    CHECK(images.rows == 3);
    CHECK(images.columns == 5);
    CHECK(images.pixels == payload);
    CHECK(images.image(1)[0] == 7 + 15);

    IdxFile any = readIdx(path);
    CHECK(any.dimensions == std::vector<uint32_t>{2, 3, 5});
  }
  auto path = scratch("rank4.gz");
  writeFile(path, idxBytes({1, 2, 3, 5}, payload), true);
  CHECK(readIdx(path).dimensions == std::vector<uint32_t>{1, 2, 3, 5});
  CHECK_THROWS_WITH_AS(readIdxImages(path), doctest::Contains("4 dimensions"), IdxError);
  CHECK_THROWS_WITH_AS(readIdxLabels(path), doctest::Contains("4 dimensions"), IdxError);

  path = scratch("empty-labels.gz");
  writeFile(path, idxBytes({0}, {}), true);
  CHECK(readIdxLabels(path).empty());
}

TEST_CASE("malformed IDX files are errors naming the file and the fault") {
  const std::vector<uint8_t> six = {0, 1, 2, 3, 4, 5};
  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    const char* message;
  };
  const Case cases[] = {
      {"short-data", idxBytes({2, 3}, {0, 1, 2, 3, 4}), "data ends after 5 of 6 bytes"},
      {"long-data", idxBytes({2, 3}, {0, 1, 2, 3, 4, 5, 6}), "more data than"},
      {"float-type", idxBytes({2, 3}, six, 0x0D), "is not unsigned byte"},
      {"bad-magic", {0x1f, 0x00, 0x08, 0x01, 0, 0, 0, 1, 9}, "bad magic"},
      {"no-dimensions", {0, 0, 8, 0}, "no dimensions"},
      {"short-header", {0, 0, 8, 3, 0, 0, 0, 2}, "header ends"},
      {"empty", {}, "header ends after 0 of 4 bytes"},
      {"huge", idxBytes({65536, 65536}, six), "more than 2^31 elements"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    for (bool gzip : {true, false}) {
      CAPTURE(gzip);
      auto path = scratch(std::string(c.name) + (gzip ? ".gz" : ""));
      writeFile(path, c.bytes, gzip);
      CHECK_THROWS_WITH_AS(readIdx(path), doctest::Contains(c.message), IdxError);
      const std::string& name = path;
      CHECK_THROWS_WITH_AS(readIdx(path), doctest::Contains(name.c_str()), IdxError);
    }
  }
  CHECK_THROWS_WITH_AS(readIdx(scratch("does-not-exist.gz")), doctest::Contains("cannot open"),
                       IdxError);
}
