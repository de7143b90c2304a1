// TensorConcat and TensorSplit on every axis, TensorSlice (steps, negative indices, clamping,
// several axes), TensorGather (any axis, multi-dimensional and negative indices): exact against
// host references, float32 and float16, poisoned destinations, temporaries; and the errors.
#include <cmath>

#include "tensor_check.h"

using namespace vkcnn;
using namespace vkcnn::tensortest;

TEST_CASE("tensor shape: concat and split on every axis") {
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16}) {
    const Shape base = {2, 3, 4, 5};
    for (int32_t axis = -4; axis < 4; ++axis) {
      CAPTURE(name(type));
      CAPTURE(axis);
      const uint32_t a = uint32_t(axis < 0 ? axis + 4 : axis);
      const uint32_t extents[] = {1, 3, 2};
      std::vector<Tensor> sources;
      std::vector<std::vector<double>> values(3);
      std::vector<Shape> shapes;
      for (int i = 0; i < 3; ++i) {
        Shape s = base;
        s[a] = extents[i];
        shapes.push_back(s);
        sources.push_back(randomTensor(s, type, uint32_t(60 + i), values[size_t(i)]));
      }
      TensorConcat concat(test::context(), axis);
      const Shape outShape = concat.destinationShape(sources);
      CHECK(outShape[a] == 6);
      std::vector<double> expected(countOf(outShape));
      for (uint64_t i = 0; i < expected.size(); ++i) {
        auto c = coordinates(i, outShape);
        int part = c[a] < 1 ? 0 : c[a] < 4 ? 1 : 2;
        c[a] -= part == 0 ? 0 : part == 1 ? 1 : 4;
        expected[i] = values[size_t(part)][flatten(c, shapes[size_t(part)])];
      }
      Tensor out = poisoned(outShape, type);
      TensorSplit split(test::context(), axis, std::vector<uint32_t>{1, 3, 2});
      std::vector<Tensor> parts;
      for (const Shape& s : split.destinationShapes(out)) parts.push_back(poisoned(s, type));
      test::runOnce([&](CommandBuffer& cb) {
        concat.encode(cb, sources, out);
        // Through a temporary too: its readCount drops once for the whole split.
        TemporaryTensor t = concat.encode(cb, sources);
        split.encode(cb, t, parts);
        CHECK(t.readCount() == 0);
      });
      CHECK(relativeError(out.readFloats(), expected) == 0);
      for (int i = 0; i < 3; ++i)
        CHECK(relativeError(parts[size_t(i)].readFloats(), values[size_t(i)]) == 0);
    }
  }
  // Equal parts, the last one smaller.
  Tensor t(test::context(), {{7, 2}});
  auto shapes = TensorSplit(test::context(), 0, 3u).destinationShapes(t);
  REQUIRE(shapes.size() == 3);
  CHECK(shapes[0] == Shape{3, 2});
  CHECK(shapes[2] == Shape{1, 2});
  VKCNN_CHECK_ERROR(TensorSplit(test::context(), 0, 5u).destinationShapes(t),
                    ErrorCode::invalidArgument, "would leave a part empty");
  VKCNN_CHECK_ERROR(
      TensorSplit(test::context(), 1, std::vector<uint32_t>{1, 2}).destinationShapes(t),
      ErrorCode::invalidArgument, "add up to 3");
  VKCNN_CHECK_ERROR(
      TensorConcat(test::context(), 0).destinationShape({t, Tensor(test::context(), {{7, 3}})}),
      ErrorCode::invalidArgument, "along an axis other than 0");
  VKCNN_CHECK_ERROR(TensorConcat(test::context(), 2).destinationShape({t}),
                    ErrorCode::invalidArgument, "axis 2");
}

TEST_CASE("tensor shape: slice with steps, negative indices and clamping") {
  struct Case {
    std::vector<int64_t> starts, ends;
    std::vector<int32_t> axes;
    std::vector<int64_t> steps;
  };
  const Shape shape = {4, 6, 9};
  const Case cases[] = {
      {{1}, {3}, {}, {}},                    // axis 0 by position
      {{0, 2}, {1000, -1}, {2, 1}, {3, 1}},  // clamped end, negative end, step 3
      {{-1}, {-1000}, {2}, {-2}},            // backwards from the last, clamped
      {{5, -2}, {0, -5}, {1, 0}, {-2, -1}},  // two axes backwards
      {{-100, 1, 0}, {100, 2, 9}, {0, 1, 2}, {1, 1, 4}},
  };
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16}) {
    std::vector<double> x;
    Tensor source = randomTensor(shape, type, 70, x);
    for (const Case& k : cases) {
      CAPTURE(name(type));
      CAPTURE(text(Shape(k.axes.begin(), k.axes.end())));
      TensorSlice slice(test::context(), k.starts, k.ends, k.axes, k.steps);
      // The reference: numpy-style per-axis index lists.
      std::vector<std::vector<uint32_t>> picks(3);
      for (uint32_t a = 0; a < 3; ++a)
        for (uint32_t i = 0; i < shape[a]; ++i) picks[a].push_back(i);
      for (size_t i = 0; i < k.starts.size(); ++i) {
        const uint32_t a = uint32_t(k.axes.empty() ? i : size_t(k.axes[i]));
        const int64_t dim = shape[a], step = k.steps.empty() ? 1 : k.steps[i];
        auto clampIndex = [&](int64_t v) {
          if (v < 0) v += dim;
          return step > 0 ? std::clamp<int64_t>(v, 0, dim) : std::clamp<int64_t>(v, -1, dim - 1);
        };
        picks[a].clear();
        for (int64_t v = clampIndex(k.starts[i]);
             step > 0 ? v < clampIndex(k.ends[i]) : v > clampIndex(k.ends[i]); v += step)
          picks[a].push_back(uint32_t(v));
      }
      const Shape outShape = {uint32_t(picks[0].size()), uint32_t(picks[1].size()),
                              uint32_t(picks[2].size())};
      REQUIRE(slice.destinationShape(source) == outShape);
      std::vector<double> expected;
      for (uint32_t i : picks[0])
        for (uint32_t j : picks[1])
          for (uint32_t l : picks[2]) expected.push_back(x[flatten({i, j, l}, shape)]);
      Tensor out = poisoned(outShape, type);
      test::runOnce([&](CommandBuffer& cb) { slice.encode(cb, source, out); });
      CHECK(relativeError(out.readFloats(), expected) == 0);
    }
  }
  Tensor t(test::context(), {{4, 6}});
  VKCNN_CHECK_ERROR(TensorSlice(test::context(), {0}, {1, 2}), ErrorCode::invalidArgument,
                    "one entry per sliced axis");
  VKCNN_CHECK_ERROR(TensorSlice(test::context(), {0, 0}, {1, 1}, {1, -1}).view(t),
                    ErrorCode::invalidArgument, "sliced twice");
  VKCNN_CHECK_ERROR(TensorSlice(test::context(), {3}, {3}).view(t), ErrorCode::invalidArgument,
                    "select no element");
}

TEST_CASE("tensor shape: gather on any axis with multi-dimensional, negative indices") {
  const Shape shape = {3, 5, 4};
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16}) {
    std::vector<double> x;
    Tensor data = randomTensor(shape, type, 80, x);
    for (int32_t axis = -1; axis < 3; ++axis) {
      CAPTURE(name(type));
      CAPTURE(axis);
      const uint32_t a = uint32_t(axis < 0 ? axis + 3 : axis);
      const int32_t dim = int32_t(shape[a]);
      // Indices [2, 3] with negative entries.
      std::vector<float> idx = {0, float(dim - 1), -1, 1, float(-dim), 2};
      for (float& v : idx) v = float(int32_t(v) % dim);
      Tensor indices(test::context(), {{2, 3}, TensorDataType::float32, "indices"});
      indices.writeFloats(idx);
      TensorGather gather(test::context(), axis);
      const Shape outShape = gather.destinationShape(data, indices);
      CHECK(outShape.size() == 4);
      Tensor out = poisoned(outShape, type);
      test::runOnce([&](CommandBuffer& cb) { gather.encode(cb, data, indices, out); });
      std::vector<double> expected(countOf(outShape));
      for (uint64_t i = 0; i < expected.size(); ++i) {
        auto c = coordinates(i, outShape);
        int32_t k = int32_t(idx[c[a] * 3 + c[a + 1]]);
        if (k < 0) k += dim;
        std::vector<uint32_t> src;
        for (uint32_t j = 0; j < a; ++j) src.push_back(c[j]);
        src.push_back(uint32_t(k));
        for (uint32_t j = a + 2; j < 4; ++j) src.push_back(c[j]);
        expected[i] = x[flatten(src, shape)];
      }
      CHECK(relativeError(out.readFloats(), expected) == 0);
    }
  }
  Context& ctx = test::context();
  Tensor data(ctx, {{3, 4}});
  Tensor halfIndices(ctx, {{2}, TensorDataType::float16});
  CommandBuffer cb(ctx);
  VKCNN_CHECK_ERROR(TensorGather(ctx, 0).encode(cb, data, halfIndices), ErrorCode::invalidArgument,
                    "must be float32");
  VKCNN_CHECK_ERROR(
      TensorGather(ctx, 0).destinationShape(data, Tensor(ctx, {{1, 1, 1, 1, 1, 1, 1, 1}})),
      ErrorCode::invalidArgument, "rank 9");
  cb.commit();
  cb.waitUntilCompleted();
}
