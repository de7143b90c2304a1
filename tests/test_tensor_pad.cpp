// TensorPad against a host reference: every mode on every axis, pads longer than the axis
// (reflect and wrap repeat), negative pads (crops), listed axes; float32 and float16; errors.
#include <cmath>

#include "tensor_check.h"

using namespace vkcnn;
using namespace vkcnn::tensortest;

namespace {

// numpy.pad's index for position s of an axis of n elements, or -1 for the constant.
int64_t sourceIndex(TensorPaddingMode mode, int64_t s, int64_t n) {
  if (s >= 0 && s < n) return s;
  switch (mode) {
    case TensorPaddingMode::constant:
      return -1;
    case TensorPaddingMode::edge:
      return s < 0 ? 0 : n - 1;
    case TensorPaddingMode::wrap:
      return ((s % n) + n) % n;
    case TensorPaddingMode::reflect:
      if (n == 1) return 0;
      while (s < 0 || s >= n) s = s < 0 ? -s : 2 * (n - 1) - s;
      return s;
  }
  return -1;
}

}  // namespace

TEST_CASE("tensor pad: every mode, long and negative pads, listed axes") {
  struct Case {
    Shape shape;
    std::vector<int64_t> pads;
    std::vector<int32_t> axes;
  };
  const Case cases[] = {
      {{2, 3, 4}, {0, 1, 2, 1, 0, 3}, {}},
      {{3, 5}, {7, -2, 6, 1}, {}},            // longer than the axis; a crop
      {{1, 2, 3, 4}, {2, 1, 1, 2}, {0, -1}},  // the batch axis and the last
      {{5}, {-1, 0}, {}},
  };
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16})
    for (const Case& k : cases)
      for (TensorPaddingMode mode : {TensorPaddingMode::constant, TensorPaddingMode::reflect,
                                     TensorPaddingMode::edge, TensorPaddingMode::wrap}) {
        CAPTURE(name(type));
        CAPTURE(text(k.shape));
        CAPTURE(int(mode));
        std::vector<double> x;
        Tensor source = randomTensor(k.shape, type, 110, x);
        TensorPad pad(test::context(), mode, k.pads, 2.5f, k.axes);
        const Shape outShape = pad.destinationShape(source);
        const uint32_t rank = uint32_t(k.shape.size());
        std::vector<int64_t> begin(rank, 0);
        const size_t listed = k.pads.size() / 2;
        for (size_t i = 0; i < listed; ++i) {
          const int32_t a = k.axes.empty() ? int32_t(i) : k.axes[i];
          begin[size_t(a < 0 ? a + int32_t(rank) : a)] = k.pads[i];
        }
        std::vector<double> expected(countOf(outShape));
        for (uint64_t i = 0; i < expected.size(); ++i) {
          auto c = coordinates(i, outShape);
          std::vector<uint32_t> src(rank);
          bool constant = false;
          for (uint32_t a = 0; a < rank; ++a) {
            const int64_t s = sourceIndex(mode, int64_t(c[a]) - begin[a], k.shape[a]);
            constant = constant || s < 0;
            src[a] = uint32_t(std::max<int64_t>(s, 0));
          }
          expected[i] = constant ? 2.5 : x[flatten(src, k.shape)];
        }
        Tensor out = poisoned(outShape, type);
        test::runOnce([&](CommandBuffer& cb) { pad.encode(cb, source, out); });
        CHECK(relativeError(out.readFloats(), expected) == 0);
      }
  Context& ctx = test::context();
  Tensor t(ctx, {{2, 3}});
  VKCNN_CHECK_ERROR(TensorPad(ctx, TensorPaddingMode::edge, {1, 2, 3}), ErrorCode::invalidArgument,
                    "two per padded axis");
  VKCNN_CHECK_ERROR(TensorPad(ctx, TensorPaddingMode::edge, {1, 2}).destinationShape(t),
                    ErrorCode::invalidArgument, "rank-2");
  VKCNN_CHECK_ERROR(TensorPad(ctx, TensorPaddingMode::edge, {-2, 0, -1, 0}).destinationShape(t),
                    ErrorCode::invalidArgument, "has -1 elements");
  VKCNN_CHECK_ERROR(TensorPad(ctx, TensorPaddingMode(9), {}), ErrorCode::invalidArgument,
                    "does not exist");
}
