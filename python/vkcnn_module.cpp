// The extension module `vkcnn._vkcnn` (pybind11, numpy) under the Python package `vkcnn`
// (python/vkcnn/__init__.py), which checks the caller's arguments, names them in its messages and
// gives the onnxruntime-style API. This module takes arguments already checked:
//   devices(); Device; Error (a RuntimeError with .code);
//   _Session(model: str path | bytes, precision, shapes, batch, device, validation, optimize,
//            winograd, external_data_dir, accumulate) with .inputs/.outputs ([(name, shape)]) and
//   .run({name: C-contiguous float32 array}) -> {name: float32 array};
//   _SessionPool(model: str path, precision, shapes, piece_batch, devices, validation, optimize,
//            winograd, accumulate, queue_depth) with the same .inputs/.outputs (one piece's) and
//   .run, and .devices ([{name, lost, pieces, images_per_second}]), .live_devices.
// Every vkcnn::Error becomes a vkcnn.Error carrying the library's message and its code name
// (.code). The GIL is released while a model loads or runs.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <map>
#include <span>
#include <optional>
#include <string>
#include <vector>

#include "vkcnn/session.h"
#include "vkcnn/session_pool.h"
#include "vkcnn/vkcnn.h"

namespace py = pybind11;

namespace {

std::string apiVersion(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

py::tuple shapeTuple(const std::vector<int64_t>& shape) {
  py::tuple t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t[i] = shape[i];
  return t;
}

py::list describe(const std::vector<vkcnn::SessionTensorInfo>& tensors) {
  py::list l;
  for (const vkcnn::SessionTensorInfo& t : tensors)
    l.append(py::make_tuple(py::str(t.name), shapeTuple(t.shape)));
  return l;
}

using FloatArray = py::array_t<float, py::array::c_style>;

// The options a Session and a SessionPool share, as the package checked them.
vkcnn::SessionOptions sessionOptions(const std::string& precision,
                                     const std::map<std::string, std::vector<int64_t>>& shapes,
                                     std::optional<bool> validation, bool optimize,
                                     std::optional<bool> winograd, const std::string& accumulate) {
  vkcnn::SessionOptions options;
  options.precision =
      precision == "fp32" ? vkcnn::ChannelFormat::float32 : vkcnn::ChannelFormat::float16;
  options.inputShapes = shapes;
  options.context.validation = validation;
  options.context.winograd = winograd;
  options.optimize = optimize;
  options.accumulatorPrecision = accumulate == "fp16" ? vkcnn::AccumulatorPrecision::float16
                                                      : vkcnn::AccumulatorPrecision::float32;
  return options;
}

// Named arrays through `run` (Session::run or SessionPool::run on HostTensors), the GIL released
// while it runs; every output of `outputs` as a new array, in that order.
template <class Run>
py::dict runNamed(const std::map<std::string, FloatArray>& arrays,
                  const std::vector<vkcnn::SessionTensorInfo>& outputs, Run&& run) {
  std::map<std::string, vkcnn::HostTensor> inputs;
  for (const auto& [name, array] : arrays) {
    vkcnn::HostTensor t;
    t.shape.assign(array.shape(), array.shape() + array.ndim());
    t.data.assign(array.data(), array.data() + array.size());
    inputs.emplace(name, std::move(t));
  }
  std::map<std::string, vkcnn::HostTensor> results;
  {
    py::gil_scoped_release release;
    results = run(inputs);
  }
  py::dict result;
  for (const vkcnn::SessionTensorInfo& info : outputs) {
    const vkcnn::HostTensor& t = results.at(info.name);
    FloatArray array(std::vector<py::ssize_t>(t.shape.begin(), t.shape.end()));
    std::copy(t.data.begin(), t.data.end(), array.mutable_data());
    result[py::str(info.name)] = std::move(array);
  }
  return result;
}

class PySession {
 public:
  // `model`: a path (str) or the model's bytes; the package checked every argument's type.
  PySession(const py::object& model, const std::string& precision,
            const std::map<std::string, std::vector<int64_t>>& shapes, uint32_t batch,
            const std::string& device, std::optional<bool> validation, bool optimize,
            std::optional<bool> winograd, const std::string& externalDataDirectory,
            const std::string& accumulate) {
    vkcnn::SessionOptions options =
        sessionOptions(precision, shapes, validation, optimize, winograd, accumulate);
    options.batch = batch;
    options.context.device = device;
    options.externalDataDirectory = externalDataDirectory;
    if (py::isinstance<py::bytes>(model)) {
      char* data = nullptr;
      py::ssize_t size = 0;
      if (PyBytes_AsStringAndSize(model.ptr(), &data, &size) != 0) throw py::error_already_set();
      const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(data), size_t(size));
      py::gil_scoped_release release;  // `model` keeps the bytes alive
      session_.emplace(vkcnn::Session::fromMemory(bytes, options));
    } else {
      const std::string path = model.cast<std::string>();
      py::gil_scoped_release release;
      session_.emplace(path, options);
    }
  }

  py::list inputs() const { return describe(session_->inputs()); }
  py::list outputs() const { return describe(session_->outputs()); }
  uint32_t batch() const { return session_->batch(); }
  std::string precision() const {
    return session_->precision() == vkcnn::ChannelFormat::float32 ? "fp32" : "fp16";
  }
  std::string device() const { return session_->context().capabilities().deviceName; }
  py::dict loadStatistics() const {
    const vkcnn::SessionLoadStatistics& l = session_->loadStatistics();
    py::dict d;
    d["read_ms"] = l.readMs;
    d["parse_ms"] = l.parseMs;
    d["check_ms"] = l.checkMs;
    d["import_ms"] = l.importMs;
    d["shape_inference_ms"] = l.shapeInferenceMs;
    d["optimize_ms"] = l.optimizeMs;
    d["pack_ms"] = l.packMs;
    d["upload_ms"] = l.uploadMs;
    d["images_ms"] = l.imagesMs;
    d["load_ms"] = l.totalMs;
    d["first_run_ms"] = l.firstRunMs;
    d["pipelines_ms"] = l.pipelinesMs;
    d["pipelines_created"] = l.pipelinesCreated;
    d["pipeline_cache_loaded"] = l.pipelineCacheLoaded;
    d["upload_bytes"] = l.uploadBytes;
    d["upload_submissions"] = l.uploadSubmissions;
    d["context_ms"] = l.contextMs;  // a Session on its own Context: its start, overlapped
    d["context_wait_ms"] = l.contextWaitMs;
    return d;
  }

  // {name: C-contiguous float32 array} (the package converted them) -> {name: array}, every
  // output in the model's order. Arrays that are exactly the inputs go to the GPU straight from
  // numpy's memory and the outputs come straight into new arrays (Session::run on spans); any
  // other set goes through Session::run on named tensors, whose checks name what is wrong.
  py::dict run(const std::map<std::string, FloatArray>& arrays) {
    if (!matchesInputs(arrays)) return runNamed(arrays);
    std::vector<std::span<const float>> in;
    for (const vkcnn::SessionTensorInfo& info : session_->inputs()) {
      const FloatArray& a = arrays.at(info.name);
      in.emplace_back(a.data(), size_t(a.size()));
    }
    py::dict result;
    std::vector<std::span<float>> out;
    for (const vkcnn::SessionTensorInfo& info : session_->outputs()) {
      FloatArray array(std::vector<py::ssize_t>(info.shape.begin(), info.shape.end()));
      out.emplace_back(array.mutable_data(), info.elementCount);
      result[py::str(info.name)] = std::move(array);
    }
    {
      py::gil_scoped_release release;  // `arrays` and `result` keep the memory alive
      session_->run(in, out);
    }
    return result;
  }

 private:
  // Every input given, under its name and with its shape, and nothing else.
  bool matchesInputs(const std::map<std::string, FloatArray>& arrays) const {
    if (arrays.size() != session_->inputs().size()) return false;
    for (const vkcnn::SessionTensorInfo& info : session_->inputs()) {
      auto it = arrays.find(info.name);
      if (it == arrays.end() || size_t(it->second.ndim()) != info.shape.size() ||
          !std::equal(info.shape.begin(), info.shape.end(), it->second.shape()))
        return false;
    }
    return true;
  }

  py::dict runNamed(const std::map<std::string, FloatArray>& arrays) {
    return ::runNamed(arrays, session_->outputs(),
                      [&](const auto& inputs) { return session_->run(inputs); });
  }

  std::optional<vkcnn::Session> session_;
};

class PySessionPool {
 public:
  PySessionPool(const std::string& path, const std::string& precision,
                const std::map<std::string, std::vector<int64_t>>& shapes, uint32_t pieceBatch,
                const std::vector<std::string>& devices, std::optional<bool> validation,
                bool optimize, std::optional<bool> winograd, const std::string& accumulate,
                uint32_t queueDepth) {
    vkcnn::SessionPoolOptions options;
    options.session = sessionOptions(precision, shapes, validation, optimize, winograd, accumulate);
    options.devices = devices;
    options.pieceBatch = pieceBatch;
    options.queueDepth = queueDepth;
    precision_ = precision;
    py::gil_scoped_release release;
    pool_.emplace(path, options);
  }

  py::list inputs() const { return describe(pool_->inputs()); }
  py::list outputs() const { return describe(pool_->outputs()); }
  uint32_t pieceBatch() const { return pool_->pieceBatch(); }
  std::string precision() const { return precision_; }
  uint32_t liveDevices() const { return pool_->liveDevices(); }
  py::list devices() const {
    py::list l;
    for (const vkcnn::SessionPoolDevice& d : pool_->devices()) {
      py::dict e;
      e["name"] = d.name;
      e["requested"] = d.requested;
      e["lost"] = d.lost;
      e["lost_reason"] = d.lostReason;
      e["pieces"] = d.pieces;
      e["busy_ms"] = d.busyMs;
      e["images_per_second"] = d.imagesPerSecond;
      l.append(e);
    }
    return l;
  }
  py::dict run(const std::map<std::string, FloatArray>& arrays) {
    return runNamed(arrays, pool_->outputs(),
                    [&](const auto& inputs) { return pool_->run(inputs); });
  }

 private:
  std::string precision_;
  std::optional<vkcnn::SessionPool> pool_;
};

}  // namespace

PYBIND11_MODULE(_vkcnn, m) {
  m.doc() = "vkcnn's extension module; use the package `vkcnn`, which checks arguments.";
  m.attr("__version__") = vkcnn::versionString();

  static py::exception<vkcnn::Error> error(m, "Error", PyExc_RuntimeError);
  error.attr("__module__") = "vkcnn";
  error.attr("__doc__") =
      "Every vkcnn failure: the message names what was wrong (a parameter, an input by name, "
      "the shape given and the shape expected); .code is the kind ('invalid argument', "
      "'invalid model', 'I/O error', 'unsupported', 'out of memory', ...).";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const vkcnn::Error& e) {
      error(e.what());
      PyObject* type = nullptr;
      PyObject* value = nullptr;
      PyObject* traceback = nullptr;
      PyErr_Fetch(&type, &value, &traceback);
      PyErr_NormalizeException(&type, &value, &traceback);
      if (value) PyObject_SetAttrString(value, "code", py::str(toString(e.code())).ptr());
      PyErr_Restore(type, value, traceback);
    }
  });

  py::class_<vkcnn::PhysicalDeviceInfo>(m, "Device", "A Vulkan device the loader reports.")
      .def_readonly("index", &vkcnn::PhysicalDeviceInfo::index, "what device=INDEX selects")
      .def_readonly("name", &vkcnn::PhysicalDeviceInfo::name, "the driver's name for it")
      .def_property_readonly(
          "type", [](const vkcnn::PhysicalDeviceInfo& d) { return toString(d.type); },
          "'discrete GPU', 'integrated GPU', 'virtual GPU', 'CPU' or 'other'")
      .def_property_readonly(
          "api_version",
          [](const vkcnn::PhysicalDeviceInfo& d) { return apiVersion(d.apiVersion); },
          "the Vulkan version it supports, 'major.minor.patch'")
      .def("__repr__", [](const vkcnn::PhysicalDeviceInfo& d) {
        return "vkcnn.Device(" + std::to_string(d.index) + ", '" + d.name + "', " +
               toString(d.type) + ", Vulkan " + apiVersion(d.apiVersion) + ")";
      });
  m.attr("Device").attr("__module__") = "vkcnn";

  m.def("devices", &vkcnn::Context::enumerateDevices,
        "The Vulkan devices the loader reports, as vkcnn.Device (Session(device=...) takes an "
        "index or a name substring).");

  py::class_<PySession>(m, "_Session")
      .def(py::init<const py::object&, const std::string&,
                    const std::map<std::string, std::vector<int64_t>>&, uint32_t,
                    const std::string&, std::optional<bool>, bool, std::optional<bool>,
                    const std::string&, const std::string&>(),
           py::arg("model"), py::arg("precision"), py::arg("shapes"), py::arg("batch"),
           py::arg("device"), py::arg("validation"), py::arg("optimize"), py::arg("winograd"),
           py::arg("external_data_dir"), py::arg("accumulate"))
      .def_property_readonly("inputs", &PySession::inputs)
      .def_property_readonly("outputs", &PySession::outputs)
      .def_property_readonly("batch", &PySession::batch)
      .def_property_readonly("precision", &PySession::precision)
      .def_property_readonly("device", &PySession::device)
      .def_property_readonly("load_statistics", &PySession::loadStatistics)
      .def("run", &PySession::run, py::arg("inputs"));

  py::class_<PySessionPool>(m, "_SessionPool")
      .def(py::init<const std::string&, const std::string&,
                    const std::map<std::string, std::vector<int64_t>>&, uint32_t,
                    const std::vector<std::string>&, std::optional<bool>, bool, std::optional<bool>,
                    const std::string&, uint32_t>(),
           py::arg("model"), py::arg("precision"), py::arg("shapes"), py::arg("piece_batch"),
           py::arg("devices"), py::arg("validation"), py::arg("optimize"), py::arg("winograd"),
           py::arg("accumulate"), py::arg("queue_depth"))
      .def_property_readonly("inputs", &PySessionPool::inputs)
      .def_property_readonly("outputs", &PySessionPool::outputs)
      .def_property_readonly("batch", &PySessionPool::pieceBatch)
      .def_property_readonly("precision", &PySessionPool::precision)
      .def_property_readonly("devices", &PySessionPool::devices)
      .def_property_readonly("live_devices", &PySessionPool::liveDevices)
      .def("run", &PySessionPool::run, py::arg("inputs"));
}
