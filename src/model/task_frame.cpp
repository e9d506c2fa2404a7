#include <utility>

#include "model/frame.hpp"

namespace dapprof::model {

Frame task_frame(std::string name, TaskState state) {
  Frame f;
  f.function = std::move(name);
  f.kind = FrameKind::Task;
  f.task_state = state;
  return f;
}

Frame event_loop_frame() {
  Frame f;
  f.function = "(event loop)";
  return f;
}

std::string_view task_state_name(TaskState state) {
  switch (state) {
    case TaskState::Running:
      return "running";
    case TaskState::Waiting:
      return "waiting";
    case TaskState::Cancelling:
      return "cancelling";
    case TaskState::Unknown:
      break;
  }
  return "unknown";
}

std::string frame_place(const Frame& frame) {
  if (frame.gc()) return std::string(kGcPlace);
  if (frame.task()) {
    if (frame.task_state == TaskState::Running) return "<task>";
    return "<task " + std::string(task_state_name(frame.task_state)) + ">";
  }
  if (frame.file.empty() && frame.native()) return frame.module;
  return frame.file;
}

std::optional<TaskState> task_place_state(std::string_view place) {
  if (place == "<task>") return TaskState::Running;
  if (place.size() < 8 || !place.starts_with("<task ") || !place.ends_with(">"))
    return std::nullopt;
  return task_state_named(place.substr(6, place.size() - 7));
}

void set_place(Frame& frame, std::string place) {
  if (const auto state = task_place_state(place); state && frame.line == 0) {
    frame.kind = FrameKind::Task;
    frame.task_state = *state;
    return;
  }
  if (place == kGcPlace && frame.line == 0) {
    frame.kind = FrameKind::Gc;
    return;
  }
  frame.file = std::move(place);
}

std::optional<TaskState> task_state_named(std::string_view name) {
  for (auto state :
       {TaskState::Running, TaskState::Waiting, TaskState::Cancelling, TaskState::Unknown})
    if (task_state_name(state) == name) return state;
  return std::nullopt;
}

}  // namespace dapprof::model
