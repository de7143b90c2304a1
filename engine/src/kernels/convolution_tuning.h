// What convolution.cpp asks of the tuning state (vkcnn/convolution_tuning.h): the configuration a
// shape's entry or trial names, and which dispatch label ran which trial candidate.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace vkcnn::detail {

class ContextImpl;

struct TuningPick {
  std::string configuration;  // "" : the cost model decides
  int candidate = -1;         // the trial candidate's index, -1 outside trials
};

// `candidates` (the cost model's choice first) is called only when trials need the list.
TuningPick tunedConfiguration(ContextImpl& context, const std::string& key,
                              const std::function<std::vector<std::string>()>& candidates);
// The dispatch label a trial candidate was encoded under (its timings come back by label).
void noteTrial(ContextImpl& context, const std::string& label, const std::string& key,
               int candidate);

}  // namespace vkcnn::detail
