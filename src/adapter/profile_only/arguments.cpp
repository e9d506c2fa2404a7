#include "adapter/profile_only/arguments.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>

#include "sampler/process/maps.hpp"
#include "sampler/process/permissions.hpp"
#include "sampler/process/tasks.hpp"
#include "sampler/python/discovery.hpp"

namespace dapprof::adapter::profile_only {
namespace {

namespace fs = std::filesystem;

Error invalid(std::string message) { return Error{std::move(message), ErrorCode::InvalidArgument}; }

Result<std::vector<std::string>> strings(const Json& value, const char* name) {
  if (!value.is_array())
    return invalid(fmt::format("\"{}\" must be an array of strings (no shell splits it)", name));
  std::vector<std::string> out;
  for (const auto& item : value) {
    if (!item.is_string()) return invalid(fmt::format("\"{}\" must hold only strings", name));
    out.push_back(item.get<std::string>());
  }
  return out;
}

const Json* find(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

Result<LaunchSpec> parse_launch(const Json& arguments, const std::string& default_python) {
  if (!arguments.is_object()) return invalid("launch: \"arguments\" must be an object");
  LaunchSpec spec;
  if (const Json* cwd = find(arguments, "cwd")) {
    if (!cwd->is_string()) return invalid("\"cwd\" must be a string");
    spec.cwd = cwd->get<std::string>();
    std::error_code ec;
    if (!fs::is_directory(spec.cwd, ec))
      return invalid(fmt::format("\"cwd\" {} is not a directory", spec.cwd));
  }
  if (const Json* python = find(arguments, "python")) {
    if (python->is_string()) {
      spec.argv.push_back(python->get<std::string>());
    } else {
      auto argv = strings(*python, "python");
      if (!argv) return argv.error();
      spec.argv = std::move(*argv);
    }
    if (spec.argv.empty() || spec.argv.front().empty())
      return invalid("\"python\" names no interpreter");
  } else {
    spec.argv.push_back(default_python);
  }
  const Json* program = find(arguments, "program");
  const Json* module = find(arguments, "module");
  if ((program != nullptr) == (module != nullptr))
    return invalid("launch needs one of \"program\" (a script's path) or \"module\"");
  if (program) {
    if (!program->is_string() || program->get<std::string>().empty())
      return invalid("\"program\" must be the path of a Python script");
    const fs::path path = program->get<std::string>();
    const fs::path resolved = path.is_absolute() || spec.cwd.empty() ? path : spec.cwd / path;
    std::error_code ec;
    if (!fs::is_regular_file(resolved, ec))
      return invalid(fmt::format("\"program\" {} is not a file", resolved.string()));
    spec.argv.push_back(resolved.string());
  } else {
    if (!module->is_string() || module->get<std::string>().empty())
      return invalid("\"module\" must be a module name");
    spec.argv.push_back("-m");
    spec.argv.push_back(module->get<std::string>());
  }
  if (const Json* args = find(arguments, "args")) {
    auto list = strings(*args, "args");
    if (!list) return list.error();
    spec.argv.insert(spec.argv.end(), list->begin(), list->end());
  }
  bool unbuffered_given = false;
  if (const Json* env = find(arguments, "env")) {
    if (!env->is_object()) return invalid("\"env\" must be an object of strings");
    for (const auto& [key, value] : env->items()) {
      if (key.empty() || key.find('=') != std::string::npos)
        return invalid(fmt::format("\"env\": {:?} is not a variable name", key));
      if (!value.is_string()) return invalid(fmt::format("\"env\": {} must be a string", key));
      spec.env.push_back(key + "=" + value.get<std::string>());
      unbuffered_given |= key == "PYTHONUNBUFFERED";
    }
  }
  // Its output reaches the client as it is written, not a pipe-buffer's worth at a time.
  if (!unbuffered_given) spec.env.insert(spec.env.begin(), "PYTHONUNBUFFERED=1");
  return spec;
}

Result<pid_t> parse_attach(const Json& arguments) {
  const Json* id = arguments.is_object() ? find(arguments, "processId") : nullptr;
  std::int64_t pid = 0;
  if (id && id->is_number_integer()) {
    pid = id->get<std::int64_t>();
  } else if (id && id->is_string()) {
    const auto text = id->get<std::string>();
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
    if (ec != std::errc() || end != text.data() + text.size()) pid = 0;
  }
  if (pid <= 0 || pid > INT32_MAX) return invalid("attach needs \"processId\", a process id");
  const auto target = static_cast<pid_t>(pid);
  if (target == ::getpid()) return invalid("dapprof cannot profile itself");
  if (::kill(target, 0) != 0 && errno == ESRCH)
    return Error{fmt::format("there is no process {}", target), ErrorCode::NoSuchProcess};
  auto maps = sampler::process::read_maps(target);
  if (!maps) {
    if (maps.error().code == ErrorCode::NoSuchProcess) return maps.error();
    return Error{sampler::process::permission_denied_message(target, "read its memory"),
                 ErrorCode::PermissionDenied};
  }
  if (sampler::python::version_in_maps(*maps).empty())
    return Error{fmt::format("process {} ({}) is not running Python: no CPython interpreter is "
                             "mapped in its memory",
                             target, sampler::process::process_name(target)),
                 ErrorCode::NotPython};
  return target;
}

}  // namespace dapprof::adapter::profile_only
