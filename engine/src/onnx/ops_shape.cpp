// ONNX shape operators: constants and what is computed from shapes (Constant, Shape, Size,
// ConstantOfShape, Range, Gather, Tile; Gather of image data as a Tensor kernel), views that change
// only the dims (Reshape, Flatten, Squeeze, Unsqueeze, Expand, transposes that keep the element
// order), and data moved within the image layout (Concat on the channels, Split, Slice, channel
// shuffle, depth <-> space).
#include <algorithm>

#include "onnx/importer.h"
#include "vkcnn/concat.h"
#include "vkcnn/error.h"
#include "vkcnn/neuron.h"
#include "vkcnn/rearrange.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn::detail::onnx_import {

void reshapeLike(Importer& im, std::vector<int64_t> dims) {
  const ImageValue& x = im.valueInput(0);
  if (checkedElementCount(dims, "reshaped tensor") != checkedElementCount(x.dims, "tensor"))
    invalidModel(dimsToString(x.dims) + " cannot become " + dimsToString(dims));
  im.setImage(0, x.tensor, std::move(dims));
}

namespace {

const HostTensor& operand(Importer& im, int k) {
  return im.constantInput(k, "operand");
}

// ---- shared parameter readers (attribute or input by opset) ----

// A list that is the attribute `name` before opset `since` (invalidModel `missing` without it)
// and the constant input 1 from then on.
std::vector<int64_t> intsByOpset(Importer& im, int64_t since, const char* name,
                                 const char* missing) {
  if (im.opset() >= since) return toInt64s(im.constantInput(1, name));
  auto a = im.attrInts(name);
  if (!a) invalidModel(missing);
  return *a;
}

std::vector<int64_t> reshapeTarget(Importer& im, const std::vector<int64_t>& in) {
  std::vector<int64_t> shape = intsByOpset(im, 5, "shape", "Reshape without a shape attribute");
  const bool allowZero = im.attrInt("allowzero", 0) != 0;
  int64_t known = 1, inferred = -1;
  const int64_t total = checkedElementCount(in, "Reshape input");
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0 && !allowZero) {
      if (k >= in.size())
        invalidModel("Reshape: 0 at axis " + std::to_string(k) + " copies no dim");
      shape[k] = in[k];
    }
    if (shape[k] == -1) {
      if (inferred >= 0) invalidModel("Reshape: more than one -1 in " + dimsToString(shape));
      inferred = int64_t(k);
      continue;
    }
    if (shape[k] < 0)
      invalidModel("Reshape: dimension " + std::to_string(shape[k]) + " is invalid");
    if (shape[k] > kMaxElements || (shape[k] && known > kMaxElements / shape[k]))
      invalidModel("Reshape: " + dimsToString(shape) + " is too large");
    known *= shape[k];
  }
  if (inferred >= 0) {
    if (known == 0 || total % known)
      invalidModel("Reshape: cannot infer -1 in " + dimsToString(shape) + " for " +
                   dimsToString(in));
    shape[size_t(inferred)] = total / known;
  }
  if (checkedElementCount(shape, "Reshape") != total)
    invalidModel("Reshape: " + dimsToString(in) + " cannot become " + dimsToString(shape));
  return shape;
}

std::vector<int64_t> flattenTarget(Importer& im, const std::vector<int64_t>& in) {
  const int64_t rank = int64_t(in.size());
  int64_t axis = im.attrInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) invalidModel("Flatten: axis out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < rank; ++k) (k < axis ? outer : inner) *= in[size_t(k)];
  return {outer, inner};
}

std::vector<int64_t> squeezeTarget(Importer& im, const std::vector<int64_t>& in) {
  std::optional<std::vector<int64_t>> axes;
  if (im.opset() < 13)
    axes = im.attrInts("axes");
  else if (im.hasInput(1))
    axes = toInt64s(im.constantInput(1, "axes"));
  const int64_t rank = int64_t(in.size());
  std::vector<bool> drop(in.size(), false);
  if (!axes) {
    for (size_t k = 0; k < in.size(); ++k) drop[k] = in[k] == 1;
  } else {
    for (int64_t a : *axes) {
      a = normalizeAxis(a, rank, "Squeeze");
      if (in[size_t(a)] != 1)
        invalidModel("Squeeze: axis " + std::to_string(a) + " of " + dimsToString(in) +
                     " is not 1");
      drop[size_t(a)] = true;
    }
  }
  std::vector<int64_t> out;
  for (size_t k = 0; k < in.size(); ++k)
    if (!drop[k]) out.push_back(in[k]);
  return out;
}

std::vector<int64_t> unsqueezeTarget(Importer& im, const std::vector<int64_t>& in) {
  const std::vector<int64_t> axes = intsByOpset(im, 13, "axes", "Unsqueeze without axes");
  const int64_t rank = int64_t(in.size() + axes.size());
  std::vector<bool> inserted(size_t(rank), false);
  for (int64_t a : axes) {
    a = normalizeAxis(a, rank, "Unsqueeze");
    if (inserted[size_t(a)]) invalidModel("Unsqueeze: axis " + std::to_string(a) + " repeats");
    inserted[size_t(a)] = true;
  }
  std::vector<int64_t> out;
  size_t next = 0;
  for (int64_t k = 0; k < rank; ++k) out.push_back(inserted[size_t(k)] ? 1 : in[next++]);
  return out;
}

// The view ops (Reshape, Flatten, Squeeze, Unsqueeze), each by the dims `Target` gives: a constant
// folds to its reshape, a value becomes a view of the new dims.
using ViewTarget = std::vector<int64_t> (*)(Importer&, const std::vector<int64_t>&);

template <ViewTarget Target>
void foldView(Importer& im) {
  const HostTensor& x = operand(im, 0);
  im.setConstant(0, reshaped(x, Target(im, x.dims)));
}

template <ViewTarget Target>
void importView(Importer& im) {
  reshapeLike(im, Target(im, im.valueInput(0).dims));
}

std::optional<std::vector<int64_t>> splitSizes(Importer& im, int64_t dim, int outputs) {
  std::optional<std::vector<int64_t>> sizes;
  if (im.opset() < 13) {
    sizes = im.attrInts("split");
    if (!sizes && im.opset() < 2 && im.hasInput(1)) sizes = toInt64s(im.constantInput(1, "split"));
  } else if (im.hasInput(1)) {
    sizes = toInt64s(im.constantInput(1, "split"));
  }
  if (!sizes) {
    if (outputs <= 0 || dim % outputs)
      invalidModel("Split: " + std::to_string(dim) + " does not split into " +
                   std::to_string(outputs) + " equal parts");
    sizes = std::vector<int64_t>(size_t(outputs), dim / outputs);
  }
  if (int(sizes->size()) != outputs)
    invalidModel("Split: " + std::to_string(sizes->size()) + " sizes for " +
                 std::to_string(outputs) + " outputs");
  int64_t total = 0;
  for (int64_t s : *sizes) {
    if (s < 0 || s > kMaxElements) invalidModel("Split: size " + std::to_string(s) + " is invalid");
    total += s;
  }
  if (total != dim)
    invalidModel("Split: sizes " + dimsToString(*sizes) + " do not add up to " +
                 std::to_string(dim));
  return sizes;
}

void sliceParameters(Importer& im, int64_t rank, std::vector<int64_t>& starts,
                     std::vector<int64_t>& ends, std::vector<int64_t>& axes,
                     std::vector<int64_t>& steps) {
  if (im.opset() < 10) {
    auto s = im.attrInts("starts"), e = im.attrInts("ends");
    if (!s || !e) invalidModel("Slice without starts and ends");
    starts = *s;
    ends = *e;
    if (auto a = im.attrInts("axes")) axes = *a;
  } else {
    starts = toInt64s(im.constantInput(1, "starts"));
    ends = toInt64s(im.constantInput(2, "ends"));
    if (im.hasInput(3)) axes = toInt64s(im.constantInput(3, "axes"));
    if (im.hasInput(4)) steps = toInt64s(im.constantInput(4, "steps"));
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    invalidModel("Slice: starts, ends, axes and steps differ in length");
  for (int64_t& a : axes) a = normalizeAxis(a, rank, "Slice");
}

std::vector<int64_t> transposePerm(Importer& im, int64_t rank) {
  std::vector<int64_t> perm;
  if (auto p = im.attrInts("perm"))
    perm = *p;
  else
    for (int64_t k = rank; k-- > 0;) perm.push_back(k);
  return perm;
}

// ---- constants and shapes ----

void constant(Importer& im) {
  if (auto t = im.attrTensor("value"))
    im.setConstant(0, std::move(*t));
  else if (auto f = im.attrFloatIf("value_float"))
    im.setConstant(0, HostTensor::floats({}, {*f}));
  else if (auto fs = im.attrFloats("value_floats"))
    im.setConstant(0, HostTensor::floats({int64_t(fs->size())}, *fs));
  else if (auto i = im.attrIntIf("value_int"))
    im.setConstant(0, HostTensor::int64s({}, {*i}));
  else if (auto is = im.attrInts("value_ints"))
    im.setConstant(0, HostTensor::int64s({int64_t(is->size())}, *is));
  else
    unsupported("Constant without a dense numeric value (sparse or string constants)");
}

const std::vector<int64_t>& dimsOf(const Value& v) {
  return v.isImage ? v.image.dims : v.constant.dims;
}

void shape(Importer& im) {
  const std::vector<int64_t>& dims = dimsOf(im.input(0));
  const int64_t rank = int64_t(dims.size());
  int64_t start = im.attrInt("start", 0), end = im.attrInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<int64_t> out(dims.begin() + start, dims.begin() + end);
  im.setConstant(0, HostTensor::int64s({int64_t(out.size())}, out));
}

void size(Importer& im) {
  int64_t n = 1;
  for (int64_t d : dimsOf(im.input(0))) n *= d;
  im.setConstant(0, HostTensor::int64s({}, {n}));
}

void constantOfShape(Importer& im) {
  HostTensor value = HostTensor::floats({1}, {0.f});
  if (auto t = im.attrTensor("value")) value = std::move(*t);
  im.setConstant(0, constantOfShape(toInt64s(im.constantInput(0, "shape")), value));
}

void foldTranspose(Importer& im) {
  const HostTensor& x = operand(im, 0);
  im.setConstant(0, transposed(x, transposePerm(im, x.rank())));
}

void foldConcat(Importer& im) {
  std::vector<const HostTensor*> parts;
  for (int k = 0; k < im.inputCount(); ++k)
    if (im.hasInput(k)) parts.push_back(&operand(im, k));
  im.setConstant(0, concatenated(parts, im.attrInt("axis", im.opset() < 4 ? 1 : 0)));
}

void foldSplit(Importer& im) {
  const HostTensor& t = operand(im, 0);
  const int64_t axis = normalizeAxis(im.attrInt("axis", 0), t.rank(), "Split");
  auto sizes = splitSizes(im, t.dims[size_t(axis)], im.outputCount());
  int64_t start = 0;
  for (int k = 0; k < im.outputCount(); ++k) {
    const int64_t size = (*sizes)[size_t(k)];
    im.setConstant(k, sliced(t, {start}, {start + size}, {axis}, {1}));
    start += size;
  }
}

void foldSlice(Importer& im) {
  const HostTensor& x = operand(im, 0);
  std::vector<int64_t> starts, ends, axes, steps;
  sliceParameters(im, x.rank(), starts, ends, axes, steps);
  im.setConstant(0, sliced(x, starts, ends, axes, steps));
}

// ---- image data ----

void concat(Importer& im) {
  std::vector<int> present;
  for (int k = 0; k < im.inputCount(); ++k)
    if (im.hasInput(k)) present.push_back(k);
  if (present.empty()) invalidModel("Concat without inputs");
  auto dimsOf = [&](int k) -> const std::vector<int64_t>& {
    const Value& v = im.input(k);
    return v.isImage ? v.image.dims : v.constant.dims;
  };
  if (present.size() == 1) return im.setImage(0, im.valueInput(present[0]));
  const int64_t rank = int64_t(dimsOf(present[0]).size());
  const int64_t axis = normalizeAxis(im.attrInt("axis", im.opset() < 4 ? 1 : 0), rank, "Concat");
  std::vector<int64_t> dims = dimsOf(present[0]);
  dims[size_t(axis)] = 0;
  // Images along the channel axis: the Graph's channel concatenation (storage, mostly).
  bool images = imageAxis(size_t(rank), axis) == ImageAxis::c;
  for (int k : present) {
    if (int64_t(dimsOf(k).size()) != rank) invalidModel("Concat inputs differ in rank");
    dims[size_t(axis)] += dimsOf(k)[size_t(axis)];
    const Value& v = im.input(k);
    images = images && v.isImage && !im.isTensor(v.image) && im.canonical(v.image);
  }
  std::vector<GraphTensor> parts;
  if (images) {
    for (int k : present) parts.push_back(im.imageInput(k).tensor);
    return im.setImage(0, im.graph().concat(parts, im.nodeName()), dims);
  }
  for (int k : present) parts.push_back(im.tensorInput(k));
  im.setImage(0, im.graph().concat(parts, uint32_t(axis), im.nodeName()), dims);
}

// One window of a canonical image: channels [c0, +cn), rows [y0, +hn), columns [x0, +wn).
// One window of a canonical image: channels [c0, +cn), rows [y0, +hn), columns [x0, +wn).
struct Crop {
  int64_t c0, cn, y0, hn, x0, wn;
};

void split(Importer& im) {
  const ImageValue& v = im.valueInput(0);
  const int64_t rank = int64_t(v.dims.size());
  const int64_t axis = normalizeAxis(im.attrInt("axis", 0), rank, "Split");
  auto sizes = splitSizes(im, v.dims[size_t(axis)], im.outputCount());
  // Along the batch, of a Tensor or a view: Tensor slices.
  if (im.isTensor(v) || rank > 4 || !im.canonical(v) ||
      (imageAxis(size_t(rank), axis) == ImageAxis::n && im.outputCount() > 1)) {
    int64_t start = 0;
    for (int k = 0; k < im.outputCount(); ++k) {
      const int64_t size = (*sizes)[size_t(k)];
      std::vector<int64_t> dims = v.dims;
      dims[size_t(axis)] = size;
      if (im.outputUsed(k)) {
        if (size == 0) unsupported("an empty Split output");
        if (size == v.dims[size_t(axis)])
          im.setImage(k, v.tensor, dims);
        else
          im.setImage(k,
                      im.graph().slice(im.tensorOf(v), {int32_t(axis)}, {start}, {start + size},
                                       {1}, im.nodeName() + ":" + std::to_string(k)),
                      dims);
      }
      start += size;
    }
    return;
  }
  const ImageValue& x = im.imageInput(0);
  const Shape4 s = im.requireCanonical(x);
  const ImageAxis ia = imageAxis(size_t(rank), axis);
  int64_t start = 0;
  for (int k = 0; k < im.outputCount(); ++k) {
    const int64_t size = (*sizes)[size_t(k)];
    std::vector<int64_t> dims = x.dims;
    dims[size_t(axis)] = size;
    if (im.outputUsed(k)) {
      if (size == 0) unsupported("an empty Split output");
      if (size == x.dims[size_t(axis)]) {
        im.setImage(k, x.tensor, dims);
      } else {
        ImageWindow w;
        w.width = uint32_t(ia == ImageAxis::w ? size : s.w);
        w.height = uint32_t(ia == ImageAxis::h ? size : s.h);
        if (ia == ImageAxis::c) {
          w.channel = uint32_t(start);
          w.channels = uint32_t(size);
        }
        if (ia == ImageAxis::w) w.x = uint32_t(start);
        if (ia == ImageAxis::h) w.y = uint32_t(start);
        im.setImage(k, im.graph().window(x.tensor, w, im.nodeName() + ":" + std::to_string(k)),
                    dims);
      }
    }
    start += size;
  }
}

void slice(Importer& im) {
  const ImageValue& x = im.valueInput(0);
  const int64_t rank = int64_t(x.dims.size());
  std::vector<int64_t> starts, ends, axes, steps;
  sliceParameters(im, rank, starts, ends, axes, steps);
  std::vector<int64_t> first(size_t(rank), 0), dims = x.dims;
  bool identity = true, steps1 = true;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = axes[k];
    const SliceRange r = sliceRange(x.dims[size_t(a)], starts[k], ends[k], steps[k]);
    if (r.count == x.dims[size_t(a)] && (steps[k] == 1 || r.count <= 1) && r.start == 0) continue;
    if (r.count == 0) unsupported("a Slice that leaves nothing");
    steps1 = steps1 && (steps[k] == 1 || r.count <= 1);
    first[size_t(a)] = r.start;
    dims[size_t(a)] = r.count;
    identity = false;
  }
  if (identity) return im.setImage(0, x);
  // Steps, the batch axis, a Tensor or a reshaped view: a Tensor slice.
  bool batchAxis = false;
  for (size_t k = 0; k < starts.size(); ++k)
    batchAxis =
        batchAxis || (dims[size_t(axes[k])] != x.dims[size_t(axes[k])] && x.dims.size() <= 4 &&
                      imageAxis(size_t(rank), axes[k]) == ImageAxis::n);
  if (!steps1 || batchAxis || im.isTensor(x) || !im.canonical(x)) {
    const std::vector<int32_t> axes32(axes.begin(), axes.end());
    return im.setImage(
        0, im.graph().slice(im.tensorOf(x), axes32, starts, ends, steps, im.nodeName()), dims);
  }
  const Shape4 s = im.requireCanonical(x);
  Crop crop{0, s.c, 0, s.h, 0, s.w};
  for (int64_t a = 0; a < rank; ++a) {
    if (dims[size_t(a)] == x.dims[size_t(a)]) continue;
    switch (imageAxis(size_t(rank), a)) {
      case ImageAxis::n:
        unsupported("Slice along the batch axis");
      case ImageAxis::c:
        crop.c0 = first[size_t(a)];
        crop.cn = dims[size_t(a)];
        break;
      case ImageAxis::h:
        crop.y0 = first[size_t(a)];
        crop.hn = dims[size_t(a)];
        break;
      case ImageAxis::w:
        crop.x0 = first[size_t(a)];
        crop.wn = dims[size_t(a)];
        break;
    }
  }
  ImageWindow w;
  w.channel = uint32_t(crop.c0);
  w.channels = uint32_t(crop.cn);
  w.x = uint32_t(crop.x0);
  w.y = uint32_t(crop.y0);
  w.width = uint32_t(crop.wn);
  w.height = uint32_t(crop.hn);
  im.setImage(0, im.graph().window(x.tensor, w, im.nodeName()), dims);
}

void transpose(Importer& im) {
  const ImageValue& x = im.valueInput(0);
  const int64_t rank = int64_t(x.dims.size());
  std::vector<int64_t> perm;
  if (auto p = im.attrInts("perm"))
    perm = *p;
  else
    for (int64_t k = rank; k-- > 0;) perm.push_back(k);
  if (int64_t(perm.size()) != rank) invalidModel("Transpose perm has the wrong length");
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  std::vector<bool> seen(size_t(rank), false);
  for (int64_t k = 0; k < rank; ++k) {
    if (perm[size_t(k)] < 0 || perm[size_t(k)] >= rank || seen[size_t(perm[size_t(k)])])
      invalidModel("Transpose perm " + dimsToString(perm) + " is not a permutation");
    seen[size_t(perm[size_t(k)])] = true;
    dims[size_t(k)] = x.dims[size_t(perm[size_t(k)])];
  }
  // Only axes of extent 1 move: the element order stays.
  std::vector<int64_t> order;
  for (int64_t p : perm)
    if (x.dims[size_t(p)] != 1) order.push_back(p);
  if (std::is_sorted(order.begin(), order.end())) return reshapeLike(im, dims);
  // Anything else leaves the image layout: a Tensor transpose.
  auto onTensor = [&] {
    const std::vector<uint32_t> p(perm.begin(), perm.end());
    im.setImage(0, im.graph().transpose(im.tensorOf(x), p, im.nodeName()), dims);
  };
  if (im.isTensor(x)) return onTensor();

  const Shape4 s = im.imageShape(x);
  const auto& d = x.dims;
  auto product = [&](size_t from, size_t to) {
    int64_t p = 1;
    for (size_t k = from; k < to; ++k) p *= d[k];
    return p;
  };
  // Channel shuffle: [N, g, C/g, rest...] with axes 1 and 2 swapped.
  if (rank >= 3 && d[0] == s.n && d[1] * d[2] == s.c && product(3, size_t(rank)) == s.h * s.w &&
      perm[0] == 0 && perm[1] == 2 && perm[2] == 1) {
    bool restInPlace = true;
    for (int64_t k = 3; k < rank; ++k) restInPlace &= perm[size_t(k)] == k;
    if (restInPlace) {
      return im.setImage(0, im.graph().channelShuffle(x.tensor, u32(d[1], "groups"), im.nodeName()),
                         dims);
    }
  }
  // Depth to space and back, as PixelShuffle exports: rank 6 views of [N, C, H, W].
  if (rank == 6 && d[0] == s.n) {
    const std::vector<int64_t> crd = {0, 1, 4, 2, 5, 3}, dcr = {0, 3, 4, 1, 5, 2},
                               s2d = {0, 3, 5, 1, 2, 4};
    // CRD: [N, C', b, b, H, W] -> [N, C', H, b, W, b]; DCR: [N, b, b, C', H, W] -> the same.
    if ((perm == crd || perm == dcr) && d[2] == (perm == crd ? d[3] : d[1]) && d[4] == s.h &&
        d[5] == s.w && d[1] * d[2] * d[3] == s.c) {
      const bool isCrd = perm == crd;
      const int64_t b = isCrd ? d[2] : d[1];
      if ((isCrd && d[3] == b) || (!isCrd && d[2] == b)) {
        const GraphTensor y = im.graph().depthToSpace(
            x.tensor, u32(b, "block"), isCrd ? DepthToSpace::Mode::CRD : DepthToSpace::Mode::DCR,
            im.nodeName());
        return im.setImage(0, y, dims);
      }
    }
    // [N, C, H/b, b, W/b, b] -> [N, b, b, C, H/b, W/b]
    if (perm == s2d && d[1] == s.c && d[3] == d[5] && d[2] * d[3] == s.h && d[4] * d[5] == s.w) {
      return im.setImage(0, im.graph().spaceToDepth(x.tensor, u32(d[3], "block"), im.nodeName()),
                         dims);
    }
  }
  onTensor();
}

void depthSpace(Importer& im, bool toSpace) {
  const ImageValue& x = im.imageInput(0);
  if (x.dims.size() != 4)
    unsupported("a rank-" + std::to_string(x.dims.size()) + " input (tensor rank)");
  const Shape4 s = im.requireCanonical(x, 4);
  const int64_t b = im.attrInt("blocksize", 0);
  if (b < 1 || b > 4096) invalidModel("blocksize " + std::to_string(b) + " is not in [1, 4096]");
  GraphTensor out;
  if (toSpace) {
    if (s.h % b || s.w % b) invalidModel("the input's size is not a multiple of the block size");
    out = im.graph().spaceToDepth(x.tensor, u32(b, "blocksize"), im.nodeName());
  } else {
    if (s.c % (b * b)) invalidModel("the input's channels are not a multiple of blocksize^2");
    const std::string mode = im.attrString("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") invalidModel("mode '" + mode + "' is not DCR or CRD");
    out = im.graph().depthToSpace(x.tensor, u32(b, "blocksize"),
                                  mode == "CRD" ? DepthToSpace::Mode::CRD : DepthToSpace::Mode::DCR,
                                  im.nodeName());
  }
  im.setImage(0, out, im.dimsLike(x, im.graph().shape(out)));
}

// Gather of image data (or image indices) on the Tensor.
void gather(Importer& im) {
  const Value& data = im.input(0);
  const Value& indices = im.input(1);
  const std::vector<int64_t>& dd = data.isImage ? data.image.dims : data.constant.dims;
  const std::vector<int64_t>& di = indices.isImage ? indices.image.dims : indices.constant.dims;
  const int64_t axis = normalizeAxis(im.attrInt("axis", 0), int64_t(dd.size()), "Gather");
  const int64_t extent = dd[size_t(axis)];
  if (!indices.isImage) {
    if (indices.constant.isFloat()) invalidModel("Gather indices must be integers");
    // As integers: a huge index must not pass through a double (fuzz_onnx found UB).
    for (int64_t i : indices.constant.i)
      if (i < -extent || i >= extent)
        invalidModel("Gather index " + std::to_string(i) + " is outside an axis of " +
                     std::to_string(extent));
  }
  std::vector<int64_t> dims(dd.begin(), dd.begin() + axis);
  dims.insert(dims.end(), di.begin(), di.end());
  dims.insert(dims.end(), dd.begin() + axis + 1, dd.end());
  im.setImage(0,
              im.graph().gather(im.tensorInput(0), im.tensorInput(1), int32_t(axis), im.nodeName()),
              dims);
}

void expand(Importer& im) {
  const ImageValue& x = im.valueInput(0);
  const auto dims = broadcastShapes(x.dims, toInt64s(im.constantInput(1, "shape")));
  if (dims == x.dims) return reshapeLike(im, dims);
  // Enlarging: x times ones that broadcast it to `dims` (ones only along the enlarged axes).
  std::vector<int64_t> ones(dims.size(), 1);
  const size_t lead = dims.size() - x.dims.size();
  for (size_t a = 0; a < dims.size(); ++a)
    if (a < lead || x.dims[a - lead] != dims[a]) ones[a] = dims[a];
  const HostTensor one = constantOfShape(ones, HostTensor::floats({1}, {1.f}));
  im.setImage(0,
              im.graph().tensorBinary(im.tensorOf(x), im.constantTensor(one),
                                      TensorBinaryOperation::multiply, im.nodeName()),
              dims);
}

constexpr int64_t kLast = kNewestOpset;

}  // namespace

std::span<const OpEntry> shapeOps() {
  static const OpEntry ops[] = {
      // Constants and shapes: evaluated at import.
      {"Constant", 1, kLast, constant, nullptr, true},
      {"Shape", 1, kLast, shape, nullptr, true},
      {"Size", 1, kLast, size, nullptr, true},
      {"ConstantOfShape", 9, kLast, constantOfShape, nullptr, true},
      {"Range", 11, kLast,
       [](Importer& im) {
         im.setConstant(0, range(operand(im, 0), operand(im, 1), operand(im, 2)));
       },
       nullptr},
      {"Gather", 1, kLast,
       [](Importer& im) {
         im.setConstant(0, gathered(operand(im, 0), operand(im, 1), im.attrInt("axis", 0)));
       },
       gather},
      {"Tile", 1, kLast,
       [](Importer& im) { im.setConstant(0, tiled(operand(im, 0), toInt64s(operand(im, 1)))); },
       nullptr},
      // Views: the image stays, the dims change.
      {"Reshape", 1, kLast, foldView<reshapeTarget>, importView<reshapeTarget>},
      {"Flatten", 1, kLast, foldView<flattenTarget>, importView<flattenTarget>},
      {"Squeeze", 1, kLast, foldView<squeezeTarget>, importView<squeezeTarget>},
      {"Unsqueeze", 1, kLast, foldView<unsqueezeTarget>, importView<unsqueezeTarget>},
      {"Expand", 8, kLast,
       [](Importer& im) { im.setConstant(0, expanded(operand(im, 0), toInt64s(operand(im, 1)))); },
       expand},
      // Data moved within the image layout.
      {"Transpose", 1, kLast, foldTranspose, transpose},
      {"Concat", 1, kLast, foldConcat, concat},
      {"Split", 1, kLast, foldSplit, split},
      {"Slice", 1, kLast, foldSlice, slice},
      {"DepthToSpace", 1, kLast, nullptr, [](Importer& im) { depthSpace(im, false); }},
      {"SpaceToDepth", 1, kLast, nullptr, [](Importer& im) { depthSpace(im, true); }},
  };
  return ops;
}

}  // namespace vkcnn::detail::onnx_import
