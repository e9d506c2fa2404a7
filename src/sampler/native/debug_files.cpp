#include "sampler/native/debug_files.hpp"

#include <elf.h>
#include <fmt/format.h>
#include <zlib.h>

#include <cstdlib>
#include <cstring>

#include "sampler/process/elf_read.hpp"

namespace dapprof::sampler::native {
namespace {

std::string hex(std::span<const std::byte> bytes) {
  std::string out;
  for (std::byte b : bytes) out += fmt::format("{:02x}", static_cast<unsigned>(b));
  return out;
}

std::string dirname_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::uint32_t crc32_of(std::span<const std::byte> bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes lengths as uInt: feed it in pieces.
  constexpr std::size_t kPiece = 1u << 30;
  for (std::size_t at = 0; at < bytes.size(); at += kPiece) {
    const auto n = static_cast<uInt>(std::min(kPiece, bytes.size() - at));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + at), n);
  }
  return static_cast<std::uint32_t>(crc);
}

}  // namespace

std::string build_id_of(const ElfSymbols& module) {
  // A note: namesz, descsz, type, then the name ("GNU\0") and the id, each padded to 4 bytes.
  const auto note = module.section(".note.gnu.build-id");
  std::size_t at = 0;
  while (note.size() - at >= 12) {
    const auto namesz = process::elf_read::at<std::uint32_t>(note, at).value_or(0);
    const auto descsz = process::elf_read::at<std::uint32_t>(note, at + 4).value_or(0);
    const auto type = process::elf_read::at<std::uint32_t>(note, at + 8).value_or(0);
    const std::size_t name_at = at + 12;
    const std::size_t desc_at = name_at + ((namesz + 3u) & ~3u);
    if (desc_at > note.size() || descsz > note.size() - desc_at) return "";
    if (type == NT_GNU_BUILD_ID && namesz == 4 && std::memcmp(note.data() + name_at, "GNU", 4) == 0)
      return hex(note.subspan(desc_at, descsz));
    at = desc_at + ((descsz + 3u) & ~3u);
  }
  return "";
}

std::optional<DebugLink> debug_link_of(const ElfSymbols& module) {
  // The file name, NUL-terminated and padded to 4 bytes, then its CRC-32.
  const auto section = module.section(".gnu_debuglink");
  if (section.empty()) return std::nullopt;
  const auto* begin = reinterpret_cast<const char*>(section.data());
  const std::size_t len = strnlen(begin, section.size());
  const std::size_t crc_at = (len + 1 + 3) & ~std::size_t{3};
  if (len == 0 || crc_at + 4 > section.size()) return std::nullopt;
  return DebugLink{std::string(begin, len),
                   process::elf_read::at<std::uint32_t>(section, crc_at).value_or(0)};
}

std::vector<std::string> debug_dirs() {
  std::vector<std::string> out;
  const char* env = std::getenv("DAPPROF_DEBUG_DIRS");
  if (!env) return {"/usr/lib/debug"};
  std::string_view rest(env);
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const auto dir = rest.substr(0, colon);
    if (!dir.empty()) out.emplace_back(dir);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return out;
}

std::vector<std::string> debug_file_candidates(const std::string& module_path,
                                               const std::string& build_id,
                                               const std::optional<DebugLink>& link,
                                               const std::vector<std::string>& dirs) {
  std::vector<std::string> out;
  if (build_id.size() > 2) {
    for (const auto& dir : dirs)
      out.push_back(
          fmt::format("{}/.build-id/{}/{}.debug", dir, build_id.substr(0, 2), build_id.substr(2)));
  }
  if (link && link->name.find('/') == std::string::npos) {
    const std::string dir = dirname_of(module_path);
    out.push_back(fmt::format("{}/{}", dir, link->name));
    out.push_back(fmt::format("{}/.debug/{}", dir, link->name));
    for (const auto& d : dirs) out.push_back(fmt::format("{}{}/{}", d, dir, link->name));
  }
  return out;
}

bool matches(const ElfSymbols& file, const std::string& build_id,
             const std::optional<DebugLink>& link) {
  if (!build_id.empty()) {
    const std::string id = build_id_of(file);
    if (!id.empty()) return id == build_id;
  }
  return link && crc32_of(file.bytes()) == link->crc;
}

Result<ElfSymbols> open_debug_file(pid_t pid, const std::string& module_path,
                                   const ElfSymbols& module) {
  const std::string build_id = build_id_of(module);
  const auto link = debug_link_of(module);
  const auto dirs = debug_dirs();
  const auto candidates = debug_file_candidates(module_path, build_id, link, dirs);
  const std::string root = fmt::format("/proc/{}/root", pid);
  // A file found by build id must have that build id; one found by debuglink must have its CRC,
  // as GDB checks: the CRC covers the whole file, the build id only what the linker hashed.
  const std::size_t by_build_id =
      candidates.size() - (link ? debug_file_candidates(module_path, "", link, dirs).size() : 0);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::string& candidate = candidates[i];
    const bool by_id = i < by_build_id;
    // The target's view first (a container's own debug files), then this machine's: either is
    // right if it matches the module, which is checked.
    for (const std::string& path : {root + candidate, candidate}) {
      if (candidate == module_path) continue;  // a debuglink naming the module itself
      auto file = ElfSymbols::open(path);
      if (file && (by_id ? matches(*file, build_id, std::nullopt) : matches(*file, "", link)))
        return file;
    }
  }
  return Error{fmt::format("no debug file for {} (build id {}{})", module_path,
                           build_id.empty() ? "none" : build_id,
                           link ? fmt::format(", debuglink {}", link->name) : "")};
}

}  // namespace dapprof::sampler::native
