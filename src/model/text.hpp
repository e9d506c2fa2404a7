#pragma once
// An immutable string shared by every copy: a frame's function, file and module. A sampled stack
// holds the same few names over and over, thousands of frames deep, and each sample is copied from
// the sampler's code cache into the snapshot, into the profile and out again; with std::string
// each of those copies was an allocation and a copy of the bytes, and each comparison of two
// frames a comparison of the bytes. A copy of a Text is a reference count; two Texts made from
// one are equal at a glance.
#include <compare>
#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

namespace dapprof::model {

class Text {
 public:
  Text() = default;
  Text(std::string s)
      : s_(s.empty() ? nullptr : std::make_shared<const std::string>(std::move(s))) {}
  Text(std::string_view s) : Text(std::string(s)) {}
  Text(const char* s) : Text(std::string_view(s)) {}

  const std::string& str() const { return s_ ? *s_ : empty_string(); }
  operator const std::string&() const { return str(); }
  operator std::string_view() const { return str(); }
  std::string_view view() const { return str(); }

  bool empty() const { return !s_; }
  std::size_t size() const { return s_ ? s_->size() : 0; }
  const char* data() const { return str().data(); }
  const char* c_str() const { return str().c_str(); }
  auto begin() const { return str().begin(); }
  auto end() const { return str().end(); }
  char operator[](std::size_t i) const { return str()[i]; }
  bool starts_with(std::string_view prefix) const { return view().starts_with(prefix); }
  bool ends_with(std::string_view suffix) const { return view().ends_with(suffix); }
  std::size_t find(std::string_view what, std::size_t from = 0) const {
    return view().find(what, from);
  }
  std::size_t find(char c, std::size_t from = 0) const { return view().find(c, from); }
  std::size_t rfind(std::string_view what, std::size_t from = std::string_view::npos) const {
    return view().rfind(what, from);
  }
  std::size_t rfind(char c, std::size_t from = std::string_view::npos) const {
    return view().rfind(c, from);
  }
  std::string substr(std::size_t from, std::size_t n = std::string_view::npos) const {
    return str().substr(from, n);
  }

  // The same shared string: what a frame copied from another frame is, decided without the bytes.
  bool same(const Text& other) const { return s_ == other.s_; }

  friend bool operator==(const Text& a, const Text& b) { return a.same(b) || a.view() == b.view(); }
  friend bool operator==(const Text& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const Text& a, const char* b) { return a.view() == std::string_view(b); }
  friend bool operator==(const Text& a, const std::string& b) { return a.view() == b; }
  friend std::strong_ordering operator<=>(const Text& a, const Text& b) {
    return a.view() <=> b.view();
  }
  friend std::strong_ordering operator<=>(const Text& a, std::string_view b) {
    return a.view() <=> b;
  }

  friend std::string operator+(const Text& a, const Text& b) { return a.str() + b.str(); }
  friend std::string operator+(const Text& a, std::string_view b) {
    return a.str() + std::string(b);
  }
  friend std::string operator+(std::string_view a, const Text& b) {
    return std::string(a) + b.str();
  }
  friend std::string operator+(const Text& a, char b) { return a.str() + b; }
  friend std::string operator+(char a, const Text& b) { return a + b.str(); }

 private:
  static const std::string& empty_string();

  std::shared_ptr<const std::string> s_;
};

std::ostream& operator<<(std::ostream& os, const Text& text);

// For nlohmann::json, found by argument-dependent lookup, without this header depending on it.
template <typename Json>
void to_json(Json& j, const Text& text) {
  j = text.str();
}

}  // namespace dapprof::model

template <>
struct std::hash<dapprof::model::Text> {
  std::size_t operator()(const dapprof::model::Text& t) const noexcept {
    return std::hash<std::string_view>{}(t.view());
  }
};
