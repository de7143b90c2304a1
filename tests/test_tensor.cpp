// Tensor: shapes, views and host transfers; TemporaryTensor's readCount and pool sharing with
// TemporaryImages; ImageToTensor and TensorToImage in both layouts; TensorCopy and TensorTranspose
// over every permutation of ranks 2-4 and sampled ones up to rank 8; hostile shapes as errors.
#include <algorithm>
#include <cmath>

#include "tensor_check.h"

using namespace vkcnn;
using namespace vkcnn::tensortest;

namespace {

const TensorDataType kTypes[] = {TensorDataType::float32, TensorDataType::float16};

// Row-major values of the view `view` of a contiguous host tensor `base` of `baseShape`, where
// the view maps index c to base index sum(c_k * strides_k) + offset.
std::vector<double> gather(const std::vector<double>& base, const Tensor& view) {
  std::vector<double> out(countOf(view.shape()));
  for (uint64_t i = 0; i < out.size(); ++i) {
    auto c = coordinates(i, view.shape());
    int64_t at = int64_t(view.storageOffset());
    for (size_t k = 0; k < c.size(); ++k) at += int64_t(c[k]) * view.strides()[k];
    out[i] = base[size_t(at)];
  }
  return out;
}

std::vector<double> transposed(const std::vector<double>& x, const Shape& shape,
                               const std::vector<uint32_t>& perm) {
  Shape out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = shape[perm[i]];
  std::vector<double> y(x.size());
  for (uint64_t i = 0; i < y.size(); ++i) {
    auto c = coordinates(i, out);
    std::vector<uint32_t> src(shape.size());
    for (size_t k = 0; k < perm.size(); ++k) src[perm[k]] = c[k];
    y[i] = x[flatten(src, shape)];
  }
  return y;
}

}  // namespace

TEST_CASE("tensor: shape, strides, host round trip and views") {
  for (TensorDataType type : kTypes) {
    CAPTURE(name(type));
    std::vector<double> x;
    Tensor t = randomTensor({2, 3, 5, 7}, type, 1, x);
    CHECK(t.rank() == 4);
    CHECK(t.elementCount() == 210);
    CHECK(t.strides() == std::vector<int64_t>{105, 35, 7, 1});
    CHECK(t.isContiguous());
    CHECK(t.dimension(-1) == 7);
    CHECK(t.resourceSize() >= 210 * bytesPerElement(type));
    CHECK(relativeError(t.readFloats(), x) == 0);

    Tensor r = t.reshape({6, -1});
    CHECK(r.shape() == Shape{6, 35});
    CHECK(relativeError(r.readFloats(), x) == 0);

    Tensor p = t.permute({3, 1, 0, 2});
    CHECK(p.shape() == Shape{7, 3, 2, 5});
    CHECK_FALSE(p.isContiguous());
    CHECK(relativeError(p.readFloats(), gather(x, p)) == 0);

    // ONNX Slice semantics: negative indices, clamping, negative steps.
    Tensor s = t.slice(3, -2, -100, -2);  // columns 5, 3, 1
    CHECK(s.shape() == Shape{2, 3, 5, 3});
    CHECK(s.strides()[3] == -2);
    CHECK(relativeError(s.readFloats(), gather(x, s)) == 0);
    Tensor s2 = t.slice(1, 1, 1000).slice(2, 0, 5, 3);
    CHECK(s2.shape() == Shape{2, 2, 2, 7});
    CHECK(relativeError(s2.readFloats(), gather(x, s2)) == 0);

    // Writing a strided view changes only its elements.
    std::vector<float> ones(countOf(s.shape()), 1.5f);
    s.writeFloats(ones);
    std::vector<double> expected = x;
    for (uint64_t i = 0; i < ones.size(); ++i) {
      auto c = coordinates(i, s.shape());
      int64_t at = int64_t(s.storageOffset());
      for (size_t k = 0; k < 4; ++k) at += int64_t(c[k]) * s.strides()[k];
      expected[size_t(at)] = 1.5;
    }
    CHECK(relativeError(t.readFloats(), expected) == 0);
  }
}

TEST_CASE("tensor: hostile shapes and misuse are clear errors") {
  Context& ctx = test::context();
  VKCNN_CHECK_ERROR(Tensor(ctx, {{1, 1, 1, 1, 1, 1, 1, 1, 1}}), ErrorCode::invalidArgument,
                    "rank 9");
  VKCNN_CHECK_ERROR(Tensor(ctx, {{}}), ErrorCode::invalidArgument, "rank 0");
  VKCNN_CHECK_ERROR(Tensor(ctx, {{4, 0, 3}}), ErrorCode::invalidArgument, "axis 1");
  VKCNN_CHECK_ERROR(Tensor(ctx, {{65536, 65536, 65536}}), ErrorCode::limitExceeded,
                    "2^31 - 1 elements");
  VKCNN_CHECK_ERROR(Tensor(ctx, {{4294967295u, 4294967295u, 4294967295u, 4294967295u}}),
                    ErrorCode::limitExceeded, "2^31 - 1 elements");
  VKCNN_CHECK_ERROR(Tensor(ctx, {{4}, TensorDataType(7)}), ErrorCode::invalidArgument,
                    "data type 7");
  Tensor t(ctx, {{2, 3, 4}, TensorDataType::float32, "t"});
  VKCNN_CHECK_ERROR(t.permute({0, 0, 1}), ErrorCode::invalidArgument, "not a permutation");
  VKCNN_CHECK_ERROR(t.permute({0, 1}), ErrorCode::invalidArgument, "not a permutation");
  VKCNN_CHECK_ERROR(t.permute({0, 1, 3}), ErrorCode::invalidArgument, "not a permutation");
  VKCNN_CHECK_ERROR(t.reshape({5, 5}), ErrorCode::invalidArgument, "holds 25 elements");
  VKCNN_CHECK_ERROR(t.reshape({-1, -1}), ErrorCode::invalidArgument, "second -1");
  VKCNN_CHECK_ERROR(t.permute({2, 1, 0}).reshape({24}), ErrorCode::invalidArgument,
                    "not contiguous");
  VKCNN_CHECK_ERROR(t.slice(2, 3, 1), ErrorCode::invalidArgument, "select no element");
  VKCNN_CHECK_ERROR(t.slice(3, 0, 1), ErrorCode::invalidArgument, "axis 3");
  VKCNN_CHECK_ERROR(t.slice(0, 0, 1, 0), ErrorCode::invalidArgument, "step is 0");
  VKCNN_CHECK_ERROR(t.writeFloats(std::vector<float>(5)), ErrorCode::invalidArgument,
                    "5 floats given for 24");
  VKCNN_CHECK_ERROR(t.dimension(-4), ErrorCode::invalidArgument, "axis -4");
  VKCNN_CHECK_ERROR(Tensor().readFloats(), ErrorCode::invalidArgument, "empty Tensor");

  CommandBuffer cb(ctx);
  TemporaryTensor temp(cb, {{8}, TensorDataType::float32, "temp"});
  VKCNN_CHECK_ERROR(temp.readFloats(), ErrorCode::misuse, "cannot read or write a temporary");
  TensorCopy copy(ctx);
  Tensor out(ctx, {{8}});
  VKCNN_CHECK_ERROR(copy.encode(cb, temp, out), ErrorCode::misuse, "read before any kernel");
  VKCNN_CHECK_ERROR(TemporaryTensor(Tensor(ctx, {{2}})), ErrorCode::invalidArgument,
                    "not a temporary");
  VKCNN_CHECK_ERROR(copy.encode(cb, t, Tensor(ctx, {{2, 4, 3}})), ErrorCode::invalidArgument,
                    "expected [2, 3, 4]");
  VKCNN_CHECK_ERROR(copy.encode(cb, t, t), ErrorCode::invalidArgument, "in-place");
  VKCNN_CHECK_ERROR(copy.encode(cb, t, Tensor(ctx, {{2, 3, 4}, TensorDataType::float16})),
                    ErrorCode::invalidArgument, "share a data type");
  cb.commit();
  cb.waitUntilCompleted();
}

TEST_CASE("tensor: image to tensor and back, NCHW and NHWC, every format pair") {
  struct Case {
    uint32_t n, c, h, w;
  };
  const Case cases[] = {{1, 5, 3, 7}, {2, 13, 5, 4}, {3, 1, 2, 9}};
  for (TensorLayout layout : {TensorLayout::NCHW, TensorLayout::NHWC})
    for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16})
      for (TensorDataType type : kTypes)
        for (const Case& k : cases) {
          CAPTURE(std::string(toString(layout)));
          CAPTURE(std::string(toString(format)));
          CAPTURE(name(type));
          CAPTURE(k.c);
          test::Tensor host = test::randomTensor(k.n, k.c, k.h, k.w, 7 + k.c);
          for (double& v : host.data)
            v = format == ChannelFormat::float16 || type == TensorDataType::float16
                    ? test::roundToHalf(double(float(v)))
                    : double(float(v));
          Image image = test::makeImage(host, format, "source");
          Shape shape =
              layout == TensorLayout::NHWC ? Shape{k.n, k.h, k.w, k.c} : Shape{k.n, k.c, k.h, k.w};
          Tensor tensor = poisoned(shape, type);
          Image back =
              test::makePoisoned(test::context(), {k.w, k.h, k.c, k.n, format, {}, "back"});
          ImageToTensor toTensor(test::context(), layout);
          TensorToImage toImage(test::context(), layout);
          CHECK(toTensor.destinationShape(image) == shape);
          test::runOnce([&](CommandBuffer& cb) {
            toTensor.encode(cb, image, tensor);
            toImage.encode(cb, tensor, back);
          });
          std::vector<double> expected(host.data.size());
          for (uint64_t i = 0; i < expected.size(); ++i) {
            auto c = coordinates(i, shape);
            expected[i] = layout == TensorLayout::NHWC ? host.at(c[0], c[3], c[1], c[2])
                                                       : host.at(c[0], c[1], c[2], c[3]);
          }
          CHECK(relativeError(tensor.readFloats(), expected) == 0);
          test::compare(test::download(back), host, 0);
        }
}

TEST_CASE("tensor: conversions through temporaries share the pool with images") {
  for (TensorDataType type : kTypes) {
    CAPTURE(name(type));
    test::Tensor host = test::randomTensor(1, 6, 8, 8, 3);
    for (double& v : host.data) v = test::roundToHalf(double(float(v)));
    Image input = test::makeImage(host, ChannelFormat::float16);
    Image output = test::makePoisoned(test::context(), {8, 8, 6, 1, ChannelFormat::float16});
    Neuron relu(test::context(), NeuronDescriptor::relu());
    ImageToTensor toTensor(test::context(), TensorLayout::NHWC);
    toTensor.dataType = type;
    TensorTranspose toNchw(test::context(), {0, 3, 1, 2});
    TensorToImage toImage(test::context(), TensorLayout::NCHW);
    CommandBuffer cb(test::context());
    TemporaryImage a = relu.encode(cb, input);
    TemporaryTensor t = toTensor.encode(cb, a);  // releases a
    CHECK(a.readCount() == 0);
    CHECK(t.readCount() == 1);
    CHECK((t.dataType() == type));
    CHECK(t.shape() == Shape{1, 8, 8, 6});
    TemporaryTensor u = toNchw.encode(cb, t);  // may alias a's memory? t's memory next
    CHECK(t.readCount() == 0);
    VKCNN_CHECK_ERROR(toNchw.encode(cb, t), ErrorCode::misuse, "readCount 0");
    u.setReadCount(2);
    TemporaryImage b = toImage.encode(cb, u);
    CHECK(u.readCount() == 1);
    u.decrementReadCount();
    relu.encode(cb, b, output);
    cb.commit();
    cb.waitUntilCompleted();
    CHECK(cb.temporaryPoolStatistics().temporariesCreated == 4);
    CHECK(cb.temporaryPoolStatistics().reuses >= 1);  // b in t's memory
    test::Tensor expected = host;
    for (double& v : expected.data) v = std::max(v, 0.0);
    test::compare(test::download(output), expected, 0);
  }
}

TEST_CASE("tensor: transpose of every permutation of ranks 1-4, odd shapes, both paths") {
  const Shape shapes[] = {{7}, {5, 37}, {3, 33, 6}, {2, 3, 5, 7}, {2, 9, 35, 4}};
  for (TensorDataType type : kTypes)
    for (const Shape& shape : shapes) {
      if (type == TensorDataType::float16 && countOf(shape) > 1000) continue;
      std::vector<double> x;
      Tensor source = randomTensor(shape, type, uint32_t(shape.size()) * 11, x);
      std::vector<uint32_t> perm(shape.size());
      std::iota(perm.begin(), perm.end(), 0);
      do {
        CAPTURE(name(type));
        CAPTURE(text(shape));
        CAPTURE(text(perm));
        TensorTranspose transpose(test::context(), perm);
        Tensor out = poisoned(transpose.destinationShape(source), type);
        test::runOnce([&](CommandBuffer& cb) { transpose.encode(cb, source, out); });
        CHECK(relativeError(out.readFloats(), transposed(x, shape, perm)) == 0);
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
}

TEST_CASE("tensor: transpose at ranks 5-8 and of strided views; copy into a slice") {
  std::mt19937 rng(5);
  for (uint32_t rank = 5; rank <= 8; ++rank) {
    Shape shape(rank);
    for (uint32_t& d : shape) d = 1 + rng() % 4;
    shape[rank - 1] = 5;
    std::vector<uint32_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    CAPTURE(text(shape));
    CAPTURE(text(perm));
    std::vector<double> x;
    Tensor source = randomTensor(shape, TensorDataType::float32, rank, x);
    TensorTranspose transpose(test::context(), perm);
    Tensor out = poisoned(transpose.destinationShape(source), TensorDataType::float32);
    test::runOnce([&](CommandBuffer& cb) { transpose.encode(cb, source, out); });
    CHECK(relativeError(out.readFloats(), transposed(x, shape, perm)) == 0);
  }
  // A reversed slice of a permuted view, copied into the middle of a poisoned destination.
  std::vector<double> x;
  Tensor source = randomTensor({6, 40, 9}, TensorDataType::float32, 77, x);
  Tensor view = source.permute({2, 0, 1}).slice(2, -1, -41, -3);  // [9, 6, 14]
  Tensor big = poisoned({9, 10, 14}, TensorDataType::float32);
  TensorCopy copy(test::context());
  test::runOnce([&](CommandBuffer& cb) { copy.encode(cb, view, big.slice(1, 2, 8)); });
  std::vector<double> expected(countOf(big.shape()), std::nan(""));
  std::vector<double> v = gather(x, view);
  for (uint64_t i = 0; i < v.size(); ++i) {
    auto c = coordinates(i, view.shape());
    c[1] += 2;
    expected[flatten(c, big.shape())] = v[i];
  }
  CHECK(relativeError(big.readFloats(), expected) == 0);
}
