// The Python module `vkcnn` (pybind11, numpy): vkcnn.devices(), vkcnn.Session(path, precision,
// shapes, batch, device, validation) with .inputs/.outputs ({name: shape}) and .run(inputs) ->
// {name: numpy array}. Every vkcnn::Error becomes a vkcnn.Error (a RuntimeError) carrying the
// library's message and its code name (.code); bad Python arguments are TypeError/ValueError.
// The GIL is released while a model loads or runs.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vkcnn/session.h"
#include "vkcnn/vkcnn.h"

namespace py = pybind11;

namespace {

std::string apiVersion(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

vkcnn::ChannelFormat precisionOf(const std::string& precision) {
  if (precision == "fp16" || precision == "float16") return vkcnn::ChannelFormat::float16;
  if (precision == "fp32" || precision == "float32") return vkcnn::ChannelFormat::float32;
  throw py::value_error("precision must be \"fp16\" or \"fp32\", not \"" + precision + "\"");
}

py::tuple shapeTuple(const std::vector<int64_t>& shape) {
  py::tuple t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t[i] = shape[i];
  return t;
}

py::dict describe(const std::vector<vkcnn::SessionTensorInfo>& tensors) {
  py::dict d;
  for (const vkcnn::SessionTensorInfo& t : tensors) d[py::str(t.name)] = shapeTuple(t.shape);
  return d;
}

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

class PySession {
 public:
  PySession(const std::string& path, const std::string& precision,
            const std::optional<std::map<std::string, std::vector<int64_t>>>& shapes,
            uint32_t batch, const std::optional<std::string>& device,
            std::optional<bool> validation, bool optimize, std::optional<bool> winograd) {
    vkcnn::SessionOptions options;
    options.precision = precisionOf(precision);
    if (shapes) options.inputShapes = *shapes;
    options.batch = batch;
    if (device) options.context.device = *device;
    options.context.validation = validation;
    options.context.winograd = winograd;
    options.optimize = optimize;
    py::gil_scoped_release release;
    session_.emplace(path, options);
  }

  py::dict inputs() const { return describe(session_->inputs()); }
  py::dict outputs() const { return describe(session_->outputs()); }
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

  // {name: array} (any float-convertible arrays, shaped as the inputs), or one array for a model
  // with one input.
  py::dict run(const py::object& given) {
    std::map<std::string, FloatArray> arrays;
    if (py::isinstance<py::dict>(given)) {
      for (auto [key, value] : given.cast<py::dict>()) {
        if (!py::isinstance<py::str>(key))
          throw py::type_error("Session.run: input names must be strings");
        arrays.emplace(key.cast<std::string>(), FloatArray::ensure(value));
        if (!arrays.at(key.cast<std::string>()))
          throw py::type_error("Session.run: input \"" + key.cast<std::string>() +
                               "\" is not convertible to a float32 array");
      }
    } else {
      if (session_->inputs().size() != 1)
        throw py::type_error("Session.run: the model has " +
                             std::to_string(session_->inputs().size()) +
                             " inputs; pass a dict {name: array}");
      FloatArray array = FloatArray::ensure(given);
      if (!array) throw py::type_error("Session.run: the input is not convertible to an array");
      arrays.emplace(session_->inputs()[0].name, std::move(array));
    }
    std::map<std::string, vkcnn::HostTensor> inputs;
    for (auto& [name, array] : arrays) {
      vkcnn::HostTensor t;
      t.shape.assign(array.shape(), array.shape() + array.ndim());
      t.data.assign(array.data(), array.data() + array.size());
      inputs.emplace(name, std::move(t));
    }
    std::map<std::string, vkcnn::HostTensor> outputs;
    {
      py::gil_scoped_release release;
      outputs = session_->run(inputs);
    }
    py::dict result;
    for (const vkcnn::SessionTensorInfo& info : session_->outputs()) {
      const vkcnn::HostTensor& t = outputs.at(info.name);
      FloatArray array(std::vector<py::ssize_t>(t.shape.begin(), t.shape.end()));
      std::copy(t.data.begin(), t.data.end(), array.mutable_data());
      result[py::str(info.name)] = std::move(array);
    }
    return result;
  }

 private:
  std::optional<vkcnn::Session> session_;
};

}  // namespace

PYBIND11_MODULE(vkcnn, m) {
  m.doc() =
      "vkcnn: a Vulkan compute inference engine for CNNs.\n\n"
      "    s = vkcnn.Session('model.onnx', precision='fp16', shapes={'input': [1, 3, 224, 224]})\n"
      "    outputs = s.run({'input': array})   # {name: numpy.ndarray}\n";
  m.attr("__version__") = vkcnn::versionString();

  static py::exception<vkcnn::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const vkcnn::Error& e) {
      error(e.what());
      // The code as vkcnn names it ("invalid argument", "I/O error", ...).
      PyObject* type = nullptr;
      PyObject* value = nullptr;
      PyObject* traceback = nullptr;
      PyErr_Fetch(&type, &value, &traceback);
      PyErr_NormalizeException(&type, &value, &traceback);
      if (value) PyObject_SetAttrString(value, "code", py::str(toString(e.code())).ptr());
      PyErr_Restore(type, value, traceback);
    }
  });

  py::class_<vkcnn::PhysicalDeviceInfo>(m, "Device")
      .def_readonly("index", &vkcnn::PhysicalDeviceInfo::index)
      .def_readonly("name", &vkcnn::PhysicalDeviceInfo::name)
      .def_property_readonly("type",
                             [](const vkcnn::PhysicalDeviceInfo& d) { return toString(d.type); })
      .def_property_readonly(
          "api_version",
          [](const vkcnn::PhysicalDeviceInfo& d) { return apiVersion(d.apiVersion); })
      .def("__repr__", [](const vkcnn::PhysicalDeviceInfo& d) {
        return "vkcnn.Device(" + std::to_string(d.index) + ", '" + d.name + "', " +
               toString(d.type) + ", Vulkan " + apiVersion(d.apiVersion) + ")";
      });

  m.def("devices", &vkcnn::Context::enumerateDevices,
        "The Vulkan devices the loader reports (Session(device=...) takes an index or a name "
        "substring).");

  py::class_<PySession>(m, "Session")
      .def(py::init<const std::string&, const std::string&,
                    const std::optional<std::map<std::string, std::vector<int64_t>>>&, uint32_t,
                    const std::optional<std::string>&, std::optional<bool>, bool,
                    std::optional<bool>>(),
           py::arg("path"), py::arg("precision") = "fp16", py::arg("shapes") = py::none(),
           py::arg("batch") = 0, py::arg("device") = py::none(), py::arg("validation") = py::none(),
           py::arg("optimize") = true, py::arg("winograd") = py::none(),
           "Loads and compiles an ONNX model. precision: 'fp16' or 'fp32' storage; shapes: "
           "{input: [dims]} for dynamic dimensions; batch: images per run (0: the model's); "
           "device: index or name substring; winograd: False keeps 3x3 convolutions off "
           "Winograd (less weight memory; None: VKCNN_NO_WINOGRAD, else on).")
      .def_property_readonly("inputs", &PySession::inputs, "{name: shape} in the model's order")
      .def_property_readonly("outputs", &PySession::outputs, "{name: shape} in the model's order")
      .def_property_readonly("batch", &PySession::batch)
      .def_property_readonly("precision", &PySession::precision)
      .def_property_readonly("device", &PySession::device)
      .def_property_readonly("load_statistics", &PySession::loadStatistics,
                             "Where the load's time went (milliseconds per phase: parse, check, "
                             "import, shape_inference, optimize, pack, upload, ...; first_run_ms "
                             "once run() was called).")
      .def("run", &PySession::run, py::arg("inputs"),
           "Runs the model on {name: array} (or one array) and returns {name: float32 array}.");
}
