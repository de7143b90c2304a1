// What the vkcnn tool's subcommands share: option parsing, the Context and the Session a command
// line asks for, input files, output paths checked before any work, JSON, progress and timing
// summaries. Messages name command-line options, never the library's C++ names.
#pragma once

#include <vkcnn/onnx.h>
#include <vkcnn/session.h>
#include <vkcnn/vkcnn.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace vkcnn::cli {

// A command line that does not make sense: exit status 2 and a pointer to --help.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class OptionKind { flag, value, repeated };
struct Option {
  std::string name;
  OptionKind kind = OptionKind::value;
};

// "--name value", "--name=value" and "--flag" options around positional arguments. An option given
// twice that is not `repeated` is an error, as is an unknown one.
class Arguments {
 public:
  Arguments(std::string command, const std::vector<std::string>& args,
            const std::vector<Option>& options);
  const std::string& command() const { return command_; }
  const std::vector<std::string>& positional() const { return positional_; }
  bool has(const std::string& name) const;
  std::string get(const std::string& name, const std::string& fallback = {}) const;
  std::vector<std::string> all(const std::string& name) const;
  long number(const std::string& name, long fallback, long minimum = 1) const;
  double real(const std::string& name, double fallback, double minimum) const;
  // The model path: the one positional argument (checked: a readable file, not a directory).
  std::string model() const;

 private:
  std::string command_;
  std::vector<std::string> positional_;
  std::map<std::string, std::vector<std::string>> values_;
};

// --device, --fp16/--fp32, --accumulate, --batch, --shape: for every command that loads a model.
std::vector<Option> modelOptions();
extern const char* const kModelOptionsHelp;

// The Context the command line asks for (--device or VKCNN_DEVICE); its log goes to stderr and
// validation messages are counted for the exit status.
// The Context --device (or VKCNN_DEVICE) asks for, its messages on stderr; a device that is not
// there is a UsageError.
ContextOptions contextOptions(const Arguments& args);
Context makeContext(const Arguments& args);
uint64_t validationMessages();

// How to load the model: precision, batch and input shapes from the options, the input files of
// `run` and `bench` by input name, and the model's declared inputs. Shapes of dynamic inputs come
// from --shape, from a .npy --input, and the batch from --batch; a dimension still unknown is a
// usage error naming --shape.
struct ModelSetup {
  std::string path;
  OnnxModelInfo declared;
  SessionOptions options;
  std::map<std::string, std::string> inputFiles;  // input name -> file
};
ModelSetup prepareModel(const Arguments& args, bool takesInputFiles);
// Whether the file is a compiled model (.vkcnn, told by its magic, whatever its name).
bool isCompiledFile(const std::string& path);
// inspect of a compiled model (inspect_compiled.cpp).
int inspectCompiled(const std::string& path, const Arguments& args);
Session loadSession(const Context& context, const ModelSetup& setup);
// The tensor of `info` from a picture (resized and centre-cropped as torchvision does), a .npy or
// a raw float32 file.
std::vector<float> loadInput(const std::string& path, const SessionTensorInfo& info,
                             const Arguments& args);
// Picture options (--mean, --std, --no-normalize, --resize, --stretch) for run and bench.
std::vector<Option> pictureOptions();
extern const char* const kPictureOptionsHelp;

// Paths checked before a run: a file to write (its folder exists and is writable, it is not a
// folder) and a file to read. `option` names the command-line option in the message.
void checkWritable(const std::string& path, const std::string& option);
void checkReadable(const std::string& path, const std::string& option);
// Writes `text`, or prints it for "-"; a failure names the reason.
void writeText(const std::string& path, const std::string& text, const std::string& option);

// A JSON object built key by key. Non-finite numbers are written as null; integers exactly.
class Json {
 public:
  Json& add(const std::string& key, const std::string& value);
  Json& add(const std::string& key, const char* value) { return add(key, std::string(value)); }
  Json& add(const std::string& key, double value);
  Json& add(const std::string& key, uint64_t value);
  Json& add(const std::string& key, uint32_t value) { return add(key, uint64_t(value)); }
  Json& add(const std::string& key, int64_t value);
  Json& add(const std::string& key, bool value);
  Json& raw(const std::string& key, const std::string& json);  // an array or object as text
  std::string str() const { return "{" + body_ + "}"; }

  static std::string quote(const std::string& s);
  static std::string number(double v);

 private:
  void key(const std::string& k);
  std::string body_;
};

// A phase of work that reports progress on stderr once it has taken more than a second (and every
// second after), and how long it took at the end if it reported anything.
class Progress {
 public:
  explicit Progress(std::string what);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // Steps done of `total` (0: unknown, or a time-based phase of `seconds`).
  void step(uint64_t done, uint64_t total = 0);
  void finish();

 private:
  void loop();
  std::string what_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<uint64_t> done_{0}, total_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool finished_ = false, reported_ = false;
  std::thread thread_;
};

using Clock = std::chrono::steady_clock;
double millisecondsSince(Clock::time_point start);

// Median, mean and percentiles (nearest rank, so median <= p90 <= p95 <= p99 <= max always).
struct Stats {
  double median = 0, p90 = 0, p95 = 0, p99 = 0, min = 0, max = 0, mean = 0;
};
Stats summarize(std::vector<double> values);

std::string shapeText(const std::vector<int64_t>& dims);
std::string lower(std::string s);
bool endsWith(const std::string& s, const std::string& suffix);
const char* precisionName(ChannelFormat format);

// The subcommands.
int info(const std::vector<std::string>& args);
int run(const std::vector<std::string>& args);
int bench(const std::vector<std::string>& args);
int profile(const std::vector<std::string>& args);
int tune(const std::vector<std::string>& args);
int inspect(const std::vector<std::string>& args);
int ops(const std::vector<std::string>& args);
int compile(const std::vector<std::string>& args);

}  // namespace vkcnn::cli
