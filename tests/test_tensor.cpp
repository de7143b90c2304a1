// Tensor: shapes, views and host transfers; TemporaryTensor's readCount and pool sharing with
// TemporaryImages; ImageToTensor and TensorToImage in both layouts; TensorCopy and TensorTranspose
// over every permutation of ranks 2-4 and sampled ones up to rank 8; the kernels past their
// dispatch caps (the loops over what one dispatch does not cover); hostile shapes as errors.
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
  VKCNN_CHECK_ERROR(TensorTranspose(ctx, {0, 2, 2}).destinationShape(t), ErrorCode::invalidArgument,
                    "not a permutation");
  VKCNN_CHECK_ERROR(TensorTranspose(ctx, {1, 0}).destinationShape(t), ErrorCode::invalidArgument,
                    "not a permutation");
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
  // Also 63, 64 and 65 pixels: the edges of the 64-texel workgroups along the flattened pixels.
  const Case cases[] = {{1, 5, 3, 7}, {2, 13, 5, 4}, {3, 1, 2, 9},
                        {1, 2, 7, 9}, {1, 9, 8, 8},  {2, 6, 5, 13}};
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

TEST_CASE("tensor: conversions of images with more pixels than one dispatch covers") {
  // 513x515 = 264195 pixels: more than the 4096 workgroups of 64 texels a layer gets, so the
  // kernels loop over the rest; 6 channels: one full and one partial layer.
  for (TensorLayout layout : {TensorLayout::NCHW, TensorLayout::NHWC}) {
    CAPTURE(std::string(toString(layout)));
    const uint32_t n = 1, c = 6, h = 513, w = 515;
    test::Tensor host = test::randomTensor(n, c, h, w, 41);
    for (double& v : host.data) v = double(float(v));
    Image image = test::makeImage(host, ChannelFormat::float32, "large");
    Shape shape = layout == TensorLayout::NHWC ? Shape{n, h, w, c} : Shape{n, c, h, w};
    Tensor tensor = poisoned(shape, TensorDataType::float32);
    Image back = test::makePoisoned(test::context(), {w, h, c, n, ChannelFormat::float32});
    ImageToTensor toTensor(test::context(), layout);
    TensorToImage toImage(test::context(), layout);
    test::runOnce([&](CommandBuffer& cb) {
      toTensor.encode(cb, image, tensor);
      toImage.encode(cb, tensor, back);
    });
    std::vector<double> expected(host.data.size());
    for (uint64_t i = 0; i < expected.size(); ++i) {
      auto k = coordinates(i, shape);
      expected[i] = layout == TensorLayout::NHWC ? host.at(k[0], k[3], k[1], k[2])
                                                 : host.at(k[0], k[1], k[2], k[3]);
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

TEST_CASE("tensor: transposes past the dispatch caps and with 4 or 5 other axes") {
  // The tiled transpose dispatches at most 1024 tiles along each of its two axes and 4096 items
  // of the other axes, and loops over the rest: 33000 elements along A or B, 4100 items.
  struct Case {
    Shape shape;
    std::vector<uint32_t> perm;
  };
  // Reversals of ranks 6 and 7 keep every axis apart: 4 axes beside the tile's (the most the
  // tiled kernel takes), and 5 (an element-by-element copy).
  const Case cases[] = {{{5, 33000}, {1, 0}},
                        {{33000, 5}, {1, 0}},
                        {{4100, 5, 6}, {0, 2, 1}},
                        {{4, 3, 2, 3, 2, 5}, {5, 4, 3, 2, 1, 0}},
                        {{4, 3, 2, 3, 2, 2, 5}, {6, 5, 4, 3, 2, 1, 0}}};
  for (const Case& k : cases) {
    CAPTURE(text(k.shape));
    CAPTURE(text(k.perm));
    std::vector<double> x;
    Tensor source = randomTensor(k.shape, TensorDataType::float32, 19, x);
    TensorTranspose transpose(test::context(), k.perm);
    Tensor out = poisoned(transpose.destinationShape(source), TensorDataType::float32);
    test::runOnce([&](CommandBuffer& cb) { transpose.encode(cb, source, out); });
    CHECK(relativeError(out.readFloats(), transposed(x, k.shape, k.perm)) == 0);
  }
}

TEST_CASE("tensor: each allocation of a tensor pipeline fails cleanly in turn") {
  // Its own Context, so nothing cached by other tests counts.
  Context ctx = test::makeContext();
  std::vector<float> input = test::randomFloats(2 * 5 * 6, 3);
  auto run = [&] {
    ctx.trimTemporaryMemory();  // so pool blocks and staging buffers are allocated every time
    Tensor source(ctx, {{2, 5, 6}, TensorDataType::float32, "source"});
    source.writeFloats(input);
    Tensor out(ctx, {{6, 2, 5}, TensorDataType::float32, "out"});
    TensorTranspose transpose(ctx, {2, 0, 1});
    TensorUnary relu(ctx, NeuronDescriptor::relu());
    CommandBuffer cb(ctx);
    TemporaryTensor t = transpose.encode(cb, source);
    relu.encode(cb, t, out);
    cb.commit();
    cb.waitUntilCompleted();
    return out.readFloats();
  };
  const std::vector<float> reference = run();
  const uint64_t before = ctx.memoryStatistics().allocationRequests;
  run();
  const uint64_t requests = ctx.memoryStatistics().allocationRequests - before;
  CHECK(requests >= 5);  // two tensors, staging buffers, a pool block, kernel parameters
  ctx.trimTemporaryMemory();
  const uint32_t live = ctx.memoryStatistics().liveAllocations;
  for (uint64_t n = 1; n <= requests; ++n) {
    CAPTURE(n);
    ctx.injectAllocationFailure(n);
    VKCNN_CHECK_ERROR(run(), ErrorCode::outOfMemory, "allocation");
    ctx.injectAllocationFailure(0);
    ctx.trimTemporaryMemory();  // staging buffers and pool blocks kept for reuse
    CHECK(ctx.memoryStatistics().liveAllocations == live);
    CHECK(run() == reference);
  }
}

TEST_CASE("tensor: cast between float16 and float32, broadcast views") {
  Context& ctx = test::context();
  // Values beyond the float16 range saturate; the rest round to nearest even.
  std::vector<float> data = test::randomFloats(3 * 7, 12, -4, 4);
  data[0] = 1e6f;
  data[1] = -7e4f;
  Tensor source(ctx, {{3, 7}, TensorDataType::float32, "source"});
  source.writeFloats(data);
  for (TensorDataType to : kTypes) {
    CAPTURE(name(to));
    TensorCast cast(ctx, to);
    Tensor half = poisoned({7, 3}, to);
    Tensor back = poisoned({7, 3}, TensorDataType::float32);
    test::runOnce([&](CommandBuffer& cb) {
      TemporaryTensor t = cast.encode(cb, source.permute({1, 0}));
      CHECK((t.dataType() == to));
      TensorCopy(ctx).encode(cb, t, half);
      // Back to float32 from the (maybe) float16 copy.
      TensorCast(ctx, TensorDataType::float32).encode(cb, half, back);
    });
    std::vector<double> expected(21);
    for (uint32_t i = 0; i < 7; ++i)
      for (uint32_t j = 0; j < 3; ++j) expected[i * 3 + j] = stored(data[j * 7 + i], to);
    CHECK(relativeError(half.readFloats(), expected) == 0);
    CHECK(relativeError(back.readFloats(), expected) == 0);
  }
  // ONNX Expand through a broadcast view and a copy.
  std::vector<double> x;
  Tensor row = randomTensor({1, 5}, TensorDataType::float32, 13, x);
  Tensor expanded = row.broadcast({2, 3, 5});
  CHECK(expanded.hasOverlap());
  Tensor out = poisoned({2, 3, 5}, TensorDataType::float32);
  test::runOnce([&](CommandBuffer& cb) { TensorCopy(ctx).encode(cb, expanded, out); });
  std::vector<double> expected;
  for (int i = 0; i < 6; ++i) expected.insert(expected.end(), x.begin(), x.end());
  CHECK(relativeError(out.readFloats(), expected) == 0);
  CHECK(relativeError(expanded.readFloats(), expected) == 0);
  VKCNN_CHECK_ERROR(row.broadcast({3, 4}), ErrorCode::invalidArgument, "cannot stretch");
  VKCNN_CHECK_ERROR(row.broadcast({5}), ErrorCode::invalidArgument, "rank must be");
  VKCNN_CHECK_ERROR(expanded.writeFloats(std::vector<float>(30)), ErrorCode::invalidArgument,
                    "broadcast");
  CommandBuffer cb(ctx);
  VKCNN_CHECK_ERROR(TensorCopy(ctx).encode(cb, out, Tensor(ctx, {{1, 3, 5}}).broadcast({2, 3, 5})),
                    ErrorCode::invalidArgument, "broadcast view");
  cb.commit();
  cb.waitUntilCompleted();
}

TEST_CASE("tensor: a chain of temporary outputs, readCounts and pool reuse") {
  Context& ctx = test::context();
  for (TensorDataType type : kTypes) {
    CAPTURE(name(type));
    std::vector<double> x, y;
    Tensor a = randomTensor({2, 3, 4}, type, 14, x, 0.5f, 1.5f);
    Tensor bias = randomTensor({4}, type, 15, y);
    Tensor indices(ctx, {{2}, TensorDataType::float32, "indices"});
    indices.writeFloats(std::vector<float>{2, 0});
    Tensor out = poisoned({2, 1}, type);
    CommandBuffer cb(ctx);
    std::vector<TemporaryTensor> made;
    auto keep = [&](const Tensor& t) {
      made.push_back(TemporaryTensor(t));
      CHECK(made.back().readCount() == 1);
      return t;
    };
    Tensor t = keep(TensorTranspose(ctx, {0, 2, 1}).encode(cb, a));  // [2, 4, 3]
    t = keep(TensorUnary(ctx, TensorUnaryOperation::sqrt).encode(cb, t));
    t = keep(TensorBinary(ctx, TensorBinaryOperation::add).encode(cb, t, bias.reshape({4, 1})));
    t = keep(TensorSoftmax(ctx, 1).encode(cb, t));
    auto parts = TensorSplit(ctx, 2, std::vector<uint32_t>{1, 2}).encode(cb, t);
    for (auto& part : parts) keep(part);
    t = keep(TensorConcat(ctx, 2).encode(cb, {parts[1], parts[0]}));  // columns 1, 2, 0
    t = keep(TensorGather(ctx, 2).encode(cb, t, indices));            // columns 0, 1
    t = keep(TensorSlice(ctx, {1}, {2}, {2}).encode(cb, t));          // column 1: [2, 4, 1]
    t = keep(TensorReduction(ctx, TensorReductionOperation::maximum, {1, 2}, false).encode(cb, t));
    TensorCopy(ctx).encode(cb, t.reshape({2, 1}), out);
    for (const TemporaryTensor& m : made) CHECK(m.readCount() == 0);
    cb.commit();
    cb.waitUntilCompleted();
    CHECK(cb.temporaryPoolStatistics().temporariesCreated == made.size());
    CHECK(cb.temporaryPoolStatistics().reuses >= 4);
    // The reference: max over rows j of softmax_j(sqrt(a[n][i][j]) + bias[j]) at column i = 1.
    auto storedValue = [&](double v) { return stored(v, type); };
    std::vector<double> expected(2);
    for (uint32_t n = 0; n < 2; ++n) {
      double m = -INFINITY, sum = 0, best = -INFINITY;
      std::vector<double> z(4);
      for (uint32_t j = 0; j < 4; ++j) {
        z[j] = storedValue(storedValue(std::sqrt(x[(n * 3 + 1) * 4 + j])) + y[j]);
        m = std::max(m, z[j]);
      }
      for (uint32_t j = 0; j < 4; ++j) sum += std::exp(z[j] - m);
      for (uint32_t j = 0; j < 4; ++j) best = std::max(best, storedValue(std::exp(z[j] - m) / sum));
      expected[n] = best;
    }
    CHECK(relativeError(out.readFloats(), expected) <= tolerance(type));
  }
}

TEST_CASE("tensor: conversions of channel windows at any offset (concatenation)") {
  Context& ctx = test::context();
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(std::string(toString(format)));
    test::Tensor host = test::randomTensor(2, 11, 3, 5, 16);
    for (double& v : host.data) v = test::roundToHalf(double(float(v)));
    Image image = test::makeImage(host, format, "concatenated");
    // Channels [3, 9) of the image into an NHWC tensor, then into channels [5, 11) of a poisoned
    // image: its channels [0, 5) stay NaN.
    ImageToTensor toTensor(ctx, TensorLayout::NHWC);
    toTensor.sourceFeatureChannelOffset = 3;
    toTensor.featureChannels = 6;
    CHECK(toTensor.destinationShape(image) == Shape{2, 3, 5, 6});
    TensorToImage toImage(ctx, TensorLayout::NHWC);
    toImage.destinationFeatureChannelOffset = 5;
    Image back = test::makePoisoned(ctx, {5, 3, 11, 2, format, {}, "back"});
    Tensor tensor = poisoned({2, 3, 5, 6}, TensorDataType::float32);
    test::runOnce([&](CommandBuffer& cb) {
      toTensor.encode(cb, image, tensor);
      toImage.encode(cb, tensor, back);
      TemporaryImage t = toImage.encode(cb, tensor);
      CHECK(t.featureChannels() == 11);
      t.decrementReadCount();
    });
    std::vector<double> expectedTensor;
    for (uint32_t n = 0; n < 2; ++n)
      for (uint32_t y = 0; y < 3; ++y)
        for (uint32_t x = 0; x < 5; ++x)
          for (uint32_t c = 0; c < 6; ++c) expectedTensor.push_back(host.at(n, 3 + c, y, x));
    CHECK(relativeError(tensor.readFloats(), expectedTensor) == 0);
    test::Tensor expected(2, 11, 3, 5, std::nan(""));
    for (uint32_t n = 0; n < 2; ++n)
      for (uint32_t c = 0; c < 6; ++c)
        for (uint32_t y = 0; y < 3; ++y)
          for (uint32_t x = 0; x < 5; ++x) expected.at(n, 5 + c, y, x) = host.at(n, 3 + c, y, x);
    test::compare(test::download(back), expected, 0);
    toTensor.featureChannels = 9;
    VKCNN_CHECK_ERROR(toTensor.destinationShape(image), ErrorCode::invalidArgument,
                      "exceed source");
    toImage.destinationFeatureChannelOffset = 6;
    CommandBuffer cb(ctx);
    VKCNN_CHECK_ERROR(toImage.encode(cb, tensor, back), ErrorCode::invalidArgument,
                      "or more channels");
    cb.commit();
    cb.waitUntilCompleted();
  }
}
