#pragma once
// Child processes' debug sessions, through dapprof.
//
// debugpy announces a child process with a `debugpyAttach` event whose `connect` names a port of
// its own adapter; a client that followed it would bypass dapprof, and the child could not be
// profiled. So a session listens on a loopback port of its own for each address debugpy
// announces, gives the client that address instead, and runs every connection accepted there as
// a full Session (same Config as the announcing session) whose upstream is a TCP connection to
// debugpy's address. A child's own children are announced on the child's connection, so the
// child's session does the same for them.
//
// Owned by its session, used only on that session's strand. The listeners last as long as the
// session: once it has ended nothing more is accepted (the port refuses), while child sessions
// already running go on by themselves.
#include <asio.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "adapter/options.hpp"
#include "adapter/session.hpp"
#include "common/result.hpp"
#include "protocol/json.hpp"

namespace dapprof::adapter {

class ChildSessions : public std::enable_shared_from_this<ChildSessions> {
 public:
  // `config` is the owning session's: children get it with their own connector.
  ChildSessions(Channel::Executor strand, std::uint64_t session_id, Session::Config config);
  ~ChildSessions();
  ChildSessions(const ChildSessions&) = delete;
  ChildSessions& operator=(const ChildSessions&) = delete;

  // debugpyAttach: points the body's `connect` at a listener of this session that stands for the
  // address debugpy announced (opened on first use). On error the body is unchanged.
  Status redirect(Json& body);

  // Once this session has ended: listeners closed, nothing more accepted. Idempotent.
  void close();

  // debugpy announces a child's own children with the `connect` of the child's attach request,
  // which is the address dapprof gave its client (`ours`), not debugpy's (`original`).
  void add_alias(HostPort ours, HostPort original);

 private:
  struct Listener;
  Result<std::shared_ptr<Listener>> listen(const HostPort& original);
  void accept(const std::shared_ptr<Listener>& listener);
  void start_child(const Listener& listener, int client_fd);
  HostPort resolve_alias(const HostPort& announced) const;

  Channel::Executor strand_;
  std::uint64_t session_id_;
  Session::Config config_;
  std::vector<std::shared_ptr<Listener>> listeners_;
  std::vector<std::pair<HostPort, HostPort>> aliases_;  // ours -> original
  bool closed_ = false;
};

}  // namespace dapprof::adapter
