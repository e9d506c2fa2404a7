#include "app/cli/task_tree.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace dapprof::app::cli {
namespace {

using sampler::AsyncTask;

std::string frame_label(const model::Frame& f) {
  if (f.line == 0 && f.file.empty()) return f.function;
  return fmt::format("{} {}:{}", f.function, f.file, f.line);
}

// Nodes are tasks (by id) or frames under a parent node; children keep their first-seen order.
class Tree {
 public:
  std::size_t task_node(std::uint64_t id, const std::string& name) {
    auto [it, added] = tasks_.emplace(id, nodes_.size());
    if (added) nodes_.push_back({"(T) " + name, {}, true});
    return it->second;
  }
  std::size_t frame_node(std::size_t parent, const std::string& label) {
    for (std::size_t child : nodes_[parent].children)
      if (!nodes_[child].task && nodes_[child].label == " " + label) return child;
    nodes_.push_back({" " + label, {}, false});
    nodes_[parent].children.push_back(nodes_.size() - 1);
    return nodes_.size() - 1;
  }
  void add_child(std::size_t parent, std::size_t child) {
    auto& kids = nodes_[parent].children;
    if (std::find(kids.begin(), kids.end(), child) == kids.end()) kids.push_back(child);
  }
  std::size_t frames_under(std::size_t node, const AsyncTask& t) {
    for (auto f = t.frames.rbegin(); f != t.frames.rend(); ++f)
      node = frame_node(node, frame_label(*f));
    return node;
  }
  void render(std::size_t node, const std::string& prefix, bool last,
              std::vector<std::string>& out) const {
    out.push_back(prefix + (last ? "└── " : "├── ") + nodes_[node].label);
    const std::string inner = prefix + (last ? "    " : "│   ");
    const auto& kids = nodes_[node].children;
    for (std::size_t i = 0; i < kids.size(); ++i) render(kids[i], inner, i + 1 == kids.size(), out);
  }
  const std::vector<std::size_t>& children(std::size_t node) const { return nodes_[node].children; }

 private:
  struct Node {
    std::string label;
    std::vector<std::size_t> children;
    bool task;
  };
  std::vector<Node> nodes_;
  std::unordered_map<std::uint64_t, std::size_t> tasks_;
};

// One cycle of the await graph (task -> the tasks it awaits), as the names along it; "" if none.
std::string find_cycle(const std::vector<AsyncTask>& tasks) {
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> awaits;
  std::unordered_map<std::uint64_t, const AsyncTask*> by_id;
  for (const auto& t : tasks) {
    by_id[t.id] = &t;
    for (auto parent : t.awaited_by) awaits[parent].push_back(t.id);
  }
  enum Mark { White, Grey, Black };
  std::unordered_map<std::uint64_t, Mark> mark;
  std::vector<std::uint64_t> path;
  std::string found;
  // Iterative, so a long await chain cannot overflow the stack.
  for (const auto& start : tasks) {
    if (mark[start.id] != White || !found.empty()) continue;
    std::vector<std::pair<std::uint64_t, std::size_t>> stack{{start.id, 0}};
    mark[start.id] = Grey;
    path.assign(1, start.id);
    while (!stack.empty() && found.empty()) {
      auto& [v, i] = stack.back();
      const auto& next = awaits[v];
      if (i == next.size()) {
        mark[v] = Black;
        stack.pop_back();
        path.pop_back();
        continue;
      }
      const std::uint64_t w = next[i++];
      if (mark[w] == Grey) {
        auto from = std::find(path.begin(), path.end(), w);
        for (auto it = from; it != path.end(); ++it)
          found += (found.empty() ? "" : " → ") +
                   (by_id.count(*it) ? by_id[*it]->name : fmt::format("{:#x}", *it));
        found += " → " + (by_id.count(w) ? by_id[w]->name : fmt::format("{:#x}", w));
      } else if (mark[w] == White) {
        mark[w] = Grey;
        path.push_back(w);
        stack.push_back({w, 0});
      }
    }
  }
  return found;
}

}  // namespace

std::vector<std::string> task_tree(const sampler::AsyncTasks& tasks, std::string& cycle) {
  cycle = find_cycle(tasks.tasks);
  if (!cycle.empty()) return {};
  Tree tree;
  std::unordered_map<std::uint64_t, const AsyncTask*> by_id;
  for (const auto& t : tasks.tasks) {
    by_id[t.id] = &t;
    tree.task_node(t.id, t.name);
  }
  std::unordered_set<std::uint64_t> awaiting, awaited;
  for (const auto& t : tasks.tasks) {
    for (auto parent_id : t.awaited_by) {
      const auto parent = by_id.find(parent_id);
      // An awaiter that is no listed task (a future) has no frames to lead to its child: the
      // child is then a root of its own.
      if (parent == by_id.end()) continue;
      awaiting.insert(parent_id);
      awaited.insert(t.id);
      const std::size_t under = tree.frames_under(tree.task_node(parent_id, ""), *parent->second);
      tree.add_child(under, tree.task_node(t.id, t.name));
    }
  }
  for (const auto& t : tasks.tasks)
    if (!awaiting.count(t.id)) tree.frames_under(tree.task_node(t.id, t.name), t);
  std::vector<std::string> out;
  for (const auto& t : tasks.tasks)
    if (!awaited.count(t.id)) tree.render(tree.task_node(t.id, t.name), "", true, out);
  return out;
}

}  // namespace dapprof::app::cli
