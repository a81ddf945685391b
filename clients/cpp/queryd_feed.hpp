// SPDX-License-Identifier: MIT
// queryd_feed.hpp: feed a game server's state to queryd over its Unix socket.
// Single header, C++17, POSIX; on Windows (10 1803+) Winsock2's AF_UNIX
// (link ws2_32). Or over the HTTP feed ([feed] http) when Options::http is
// set. No other dependencies. See README.md beside it.
//
// Calls never block the game's frame: replace() and patch() queue the
// change (bounded; when the queue is full its patches are folded into one
// replace of the newest state); a background thread connects, sends, pings
// on a timer and reconnects with backoff.
//
// It keeps two things: the last document queryd accepted (its last accepted
// replace with the patches it accepted since merged in) and the changes not
// answered yet. A change queryd rejects is dropped and passed to the
// on_rejected callback, so it never reaches the accepted document; after
// each (re)connect the accepted document is sent first, then the changes
// still pending, each checked again by queryd. Errors go to the on_error
// callback (called on the background thread).
#ifndef QUERYD_FEED_HPP
#define QUERYD_FEED_HPP

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <winsock2.h>
#include <ws2tcpip.h>
#if defined(__has_include) && !defined(QUERYD_VENDOR_AFUNIX)  // (the test builds both)
#if __has_include(<afunix.h>)
#include <afunix.h>
#define QUERYD_HAVE_AFUNIX_H 1
#endif
#endif
#ifndef QUERYD_HAVE_AFUNIX_H
// afunix.h (Windows SDK 17063+, mingw-w64 6+) is missing: its definition.
#ifndef UNIX_PATH_MAX
#define UNIX_PATH_MAX 108
#endif
typedef struct sockaddr_un {
  ADDRESS_FAMILY sun_family;
  char sun_path[UNIX_PATH_MAX];
} SOCKADDR_UN, *PSOCKADDR_UN;
#endif
#ifdef _MSC_VER
#pragma comment(lib, "ws2_32.lib")
#endif
#else
#include <netdb.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#endif

#include <cerrno>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace queryd {

// detail holds what differs between POSIX sockets and Winsock.
namespace detail {
#ifdef _WIN32
using socket_t = SOCKET;
constexpr socket_t no_socket = INVALID_SOCKET;
using io_size = int;  // send and recv take and return int
constexpr int send_flags = 0;  // Winsock raises no SIGPIPE

// error_text describes a Winsock error code.
inline std::string error_text(int code) {
  char buf[256] = {0};
  DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
                           static_cast<DWORD>(code), 0, buf, sizeof buf, nullptr);
  while (n > 0 && (buf[n - 1] == '\r' || buf[n - 1] == '\n' || buf[n - 1] == '.')) buf[--n] = 0;
  return (n ? std::string(buf) : std::string("error")) + " (" + std::to_string(code) + ")";
}
inline std::string last_error() { return error_text(WSAGetLastError()); }
inline bool interrupted() { return WSAGetLastError() == WSAEINTR; }
inline void close_socket(socket_t s) { ::closesocket(s); }
inline socket_t open_socket(int family) { return ::socket(family, SOCK_STREAM, 0); }
inline void set_timeouts(socket_t s, std::chrono::milliseconds t) {
  DWORD ms = static_cast<DWORD>(t.count());  // Winsock: a DWORD of milliseconds
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, reinterpret_cast<const char*>(&ms), sizeof ms);
  setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, reinterpret_cast<const char*>(&ms), sizeof ms);
}

// Net holds Winsock open (WSAStartup) while a Feed lives.
class Net {
 public:
  Net() {
    WSADATA data;
    err_ = WSAStartup(MAKEWORD(2, 2), &data);
  }
  ~Net() {
    if (err_ == 0) WSACleanup();
  }
  Net(const Net&) = delete;
  Net& operator=(const Net&) = delete;
  // error is "" when Winsock started, or why it did not.
  std::string error() const { return err_ == 0 ? "" : "WSAStartup: " + error_text(err_); }

 private:
  int err_ = 0;
};
#else
using socket_t = int;
constexpr socket_t no_socket = -1;
using io_size = size_t;
constexpr int send_flags = MSG_NOSIGNAL;

inline std::string last_error() { return std::strerror(errno); }
inline bool interrupted() { return errno == EINTR; }
inline void close_socket(socket_t s) { ::close(s); }
inline socket_t open_socket(int family) { return ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0); }
inline void set_timeouts(socket_t s, std::chrono::milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>(t.count() % 1000 * 1000);
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// Net: POSIX sockets need no start-up.
struct Net {
  std::string error() const { return ""; }
};
#endif

// io_len clamps a length to what send and recv take.
inline io_size io_len(size_t n) {
  return static_cast<io_size>((std::min<size_t>)(n, static_cast<size_t>((std::numeric_limits<io_size>::max)())));
}
}  // namespace detail

struct Member;

// Value is a JSON value: null, a boolean, a number, a string, an array or
// an object (its members in order).
class Value {
 public:
  enum class Type { Null, Bool, Int, Double, String, Array, Object };

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : type_(Type::Bool), b_(b) {}
  Value(int i) : type_(Type::Int), i_(i) {}
  Value(long i) : type_(Type::Int), i_(i) {}
  Value(long long i) : type_(Type::Int), i_(i) {}
  Value(unsigned i) : type_(Type::Int), i_(i) {}
  Value(unsigned long i) : type_(Type::Int), i_(static_cast<long long>(i)) {}
  Value(unsigned long long i) : type_(Type::Int), i_(static_cast<long long>(i)) {}
  Value(float d) : type_(Type::Double), d_(d) {}
  Value(double d) : type_(Type::Double), d_(d) {}
  Value(const char* s) : type_(Type::String), s_(s) {}
  Value(std::string s) : type_(Type::String), s_(std::move(s)) {}
  Value(std::vector<Value> a) : type_(Type::Array), arr_(std::move(a)) {}
  Value(std::vector<Member> o);

  Type type() const { return type_; }
  bool is_object() const { return type_ == Type::Object; }
  bool is_null() const { return type_ == Type::Null; }

  // write appends the value as JSON (UTF-8 strings as they are; control
  // characters, quotes and backslashes escaped; NaN and infinities as null).
  void write(std::string& out) const;
  std::string json() const {
    std::string s;
    write(s);
    return s;
  }

  // merge applies an RFC 7386 JSON merge patch to this value.
  void merge(const Value& patch);

 private:
  Type type_ = Type::Null;
  bool b_ = false;
  long long i_ = 0;
  double d_ = 0;
  std::string s_;
  std::vector<Value> arr_;
  std::vector<Member> obj_;
};

// Member is one key and value of an object.
struct Member {
  std::string key;
  Value value;
};

inline Value::Value(std::vector<Member> o) : type_(Type::Object), obj_(std::move(o)) {}

// object builds an object: object({{"name", "Zoë"}, {"score", 3}}).
inline Value object(std::initializer_list<Member> members) { return Value(std::vector<Member>(members)); }
// array builds an array: array({"roleplay", "eu"}).
inline Value array(std::initializer_list<Value> items) { return Value(std::vector<Value>(items)); }

inline void write_string(std::string& out, const std::string& s) {
  static const char hex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

inline void Value::write(std::string& out) const {
  switch (type_) {
    case Type::Null: out += "null"; break;
    case Type::Bool: out += b_ ? "true" : "false"; break;
    case Type::Int: out += std::to_string(i_); break;
    case Type::Double: {
      if (!std::isfinite(d_)) {
        out += "null";
        break;
      }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d_);
      out += buf;
      break;
    }
    case Type::String: write_string(out, s_); break;
    case Type::Array:
      out += '[';
      for (size_t i = 0; i < arr_.size(); i++) {
        if (i) out += ',';
        arr_[i].write(out);
      }
      out += ']';
      break;
    case Type::Object:
      out += '{';
      for (size_t i = 0; i < obj_.size(); i++) {
        if (i) out += ',';
        write_string(out, obj_[i].key);
        out += ':';
        obj_[i].value.write(out);
      }
      out += '}';
      break;
  }
}

inline void Value::merge(const Value& patch) {
  if (!patch.is_object()) {
    *this = patch;
    return;
  }
  if (!is_object()) *this = Value(std::vector<Member>{});
  for (const Member& m : patch.obj_) {
    size_t i = 0;
    while (i < obj_.size() && obj_[i].key != m.key) i++;
    if (m.value.is_null()) {
      if (i < obj_.size()) obj_.erase(obj_.begin() + static_cast<long>(i));
    } else if (i < obj_.size()) {
      obj_[i].value.merge(m.value);
    } else {
      Value v;
      v.merge(m.value);  // a patch's nulls inside a new member are dropped too
      obj_.push_back(Member{m.key, std::move(v)});
    }
  }
}

// Options configure a Feed.
struct Options {
  std::string socket = "/run/queryd/feed.sock";  // [feed] socket
  std::string http;   // [feed] http, e.g. "http://127.0.0.1:27017": when set, used instead of socket
  std::string token;  // the HTTP feed's token (the content of [feed] http_token_file)
  std::chrono::milliseconds ping_every{10000};   // well under [feed] stale_after (60 s)
  std::chrono::milliseconds backoff_min{100};    // first reconnect delay, doubled up to backoff_max
  std::chrono::milliseconds backoff_max{5000};
  std::chrono::milliseconds timeout{5000};  // a send or a reply taking longer drops the connection
  size_t max_queue = 64;                    // patches queued; past it the whole state is sent instead
};

// Rejection is a change queryd rejected: dropped, so the accepted document
// never has it.
struct Rejection {
  std::string op;      // "replace" or "patch"
  std::string change;  // the JSON sent: the document or the merge patch
  std::string reply;   // queryd's answer: {"ok":false,"error":"state.players.1.score: …"}
};

// Feed sends a state to queryd from a background thread. Its methods are
// safe to call from any thread and return at once.
class Feed {
 public:
  using ErrorHandler = std::function<void(const std::string&)>;
  using RejectHandler = std::function<void(const Rejection&)>;

  explicit Feed(Options opts = Options()) : opts_(std::move(opts)), worker_([this] { run(); }) {}
  ~Feed() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
    close_conn();
  }
  Feed(const Feed&) = delete;
  Feed& operator=(const Feed&) = delete;

  // on_error sets the callback for connection errors and rejected messages.
  void on_error(ErrorHandler h) {
    std::lock_guard<std::mutex> l(mu_);
    on_error_ = std::move(h);
  }

  // on_rejected sets the callback for a replace or patch queryd rejected
  // (called on the background thread, after on_error): it is dropped, and
  // the local copy no longer has it.
  void on_rejected(RejectHandler h) {
    std::lock_guard<std::mutex> l(mu_);
    on_rejected_ = std::move(h);
  }

  // replace sets the whole state (queryd's "replace").
  void replace(const Value& state) {
    std::lock_guard<std::mutex> l(mu_);
    Value doc;
    doc.merge(state);  // as queryd stores it: members set to null left out
    pending_.clear();  // newest state wins
    pending_.push_back(std::make_shared<Change>(Change{true, std::move(doc), ++generation_}));
    cv_.notify_all();
  }

  // patch merges an RFC 7386 merge patch (queryd's "patch"): a player
  // joins with {"players":{"7":{…}}} and leaves with {"players":{"7":null}}.
  void patch(const Value& p) {
    std::lock_guard<std::mutex> l(mu_);
    pending_.push_back(std::make_shared<Change>(Change{false, p, generation_}));
    size_t patches = 0;
    for (const auto& c : pending_) patches += c->replace ? 0 : 1;
    if (patches > opts_.max_queue) fold();
    cv_.notify_all();
  }

  // accepted returns the last document queryd accepted, as JSON ("" before
  // it accepted one).
  std::string accepted() {
    std::lock_guard<std::mutex> l(mu_);
    return have_accepted_ ? accepted_.json() : "";
  }

  // ping asks for a keep-alive now (one is also sent every ping_every).
  void ping() {
    std::lock_guard<std::mutex> l(mu_);
    ping_now_ = true;
    cv_.notify_all();
  }

  // connected reports whether the worker holds a connection now.
  bool connected() const { return fd_.load() != detail::no_socket; }

 private:
  using Clock = std::chrono::steady_clock;

  // Change is one replace or patch not answered yet.
  struct Change {
    bool replace;
    Value doc;  // the document or the merge patch
    long long generation;  // replace() calls before it: a change older than the last replace is superseded
    bool folded = false;   // the pending patches folded into one replace
    bool resync = false;   // the accepted document, sent again after a connect
    void apply_to(Value& d, bool& have) const {
      if (replace) d = doc;
      else d.merge(doc);
      have = true;
    }
  };
  using ChangePtr = std::shared_ptr<Change>;

  // Message is one line to send and the change it carries (none for a ping).
  struct Message {
    std::string line, op, body;
    ChangePtr change;
  };

  // fold (mu_ held) turns the pending patches into one replace of the newest
  // state: the accepted document with every change not answered yet merged
  // in. A replace the game set itself stays ahead of it, so that a rejected
  // fold still leaves that one.
  void fold() {
    Value doc = accepted_;
    bool have = have_accepted_;
    if (inflight_) inflight_->apply_to(doc, have);
    for (const auto& c : pending_) c->apply_to(doc, have);
    ChangePtr own;
    if (!pending_.empty() && pending_.front()->replace && !pending_.front()->folded) own = pending_.front();
    pending_.clear();
    if (own) pending_.push_back(own);
    auto f = std::make_shared<Change>(Change{true, std::move(doc), generation_});
    f->folded = true;
    pending_.push_back(std::move(f));
  }

  void report(const std::string& msg) {
    ErrorHandler h;
    {
      std::lock_guard<std::mutex> l(mu_);
      h = on_error_;
    }
    if (h) h(msg);
  }

  static Message message(const char* op, const ChangePtr& c) {
    Message m{"", op, c ? c->doc.json() : "", c};
    m.line = c ? "{\"op\":\"" + m.op + "\",\"state\":" + m.body + "}" : "{\"op\":\"ping\"}";
    return m;
  }

  // next waits for the next message to send (an empty line when stopping).
  Message next() {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      if (stop_) return Message{};
      if (resync_) {
        resync_ = false;
        if (have_accepted_) {  // queryd may have restarted: what it accepted comes first
          auto c = std::make_shared<Change>(Change{true, accepted_, generation_});
          c->resync = true;
          return message("replace", c);
        }
      }
      if (!pending_.empty()) {
        inflight_ = pending_.front();
        pending_.pop_front();
        return message(inflight_->replace ? "replace" : "patch", inflight_);
      }
      if (ping_now_ || Clock::now() - last_sent_ >= opts_.ping_every) {
        ping_now_ = false;
        return message("ping", nullptr);
      }
      cv_.wait_until(l, last_sent_ + opts_.ping_every);
    }
  }

  // answered records queryd's answer to a message.
  void answered(const Message& m, const std::string& reply) {
    bool ok = reply.compare(0, 10, "{\"ok\":true") == 0;
    RejectHandler h;
    {
      std::lock_guard<std::mutex> l(mu_);
      last_sent_ = Clock::now();
      const ChangePtr& c = m.change;
      if (c && ok && !c->resync) {
        c->apply_to(accepted_, have_accepted_);
      } else if (c && !ok && c->resync) {  // even what it accepted before: a queryd with other rules
        accepted_ = Value();
        have_accepted_ = false;
      }
      if (c && inflight_ == c) inflight_.reset();
      h = on_rejected_;
    }
    if (ok) return;
    report("queryd rejected " + m.line.substr(0, 200) + ": " + reply);
    if (m.change && h) h(Rejection{m.op, m.body, reply});
  }

  // lost puts a change whose answer never came back in front of the pending
  // ones (unless a replace came since), to be sent after the accepted
  // document once connected again.
  void lost(const Message& m) {
    std::lock_guard<std::mutex> l(mu_);
    resync_ = true;
    if (!m.change || inflight_ != m.change) return;
    inflight_.reset();
    if (m.change->generation == generation_) pending_.push_front(m.change);
  }

  void run() {
    auto backoff = opts_.backoff_min;
    while (!stopping()) {
      if (fd_.load() == detail::no_socket) {
        std::string err = dial();
        if (!err.empty()) {
          report(err);
          sleep_for(backoff);
          backoff = (std::min)(backoff * 2, opts_.backoff_max);
          continue;
        }
        backoff = opts_.backoff_min;
        std::lock_guard<std::mutex> l(mu_);
        resync_ = true;  // queryd may have restarted: send what it accepted, then the rest
      }
      Message m = next();
      if (m.line.empty()) return;
      std::string reply, err = round_trip(m.line, reply);
      if (!err.empty()) {
        close_conn();
        report(err);
        lost(m);  // it may or may not have arrived
        continue;
      }
      answered(m, reply);
      if (http_close_) {  // queryd ends this HTTP connection: the next dial opens another
        http_close_ = false;
        close_conn();
      }
    }
  }

  bool stopping() {
    std::lock_guard<std::mutex> l(mu_);
    return stop_;
  }

  void sleep_for(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, d, [this] { return stop_; });
  }

  std::string dial() {
    if (!opts_.http.empty()) return dial_http();
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (opts_.socket.size() >= sizeof addr.sun_path) return "socket path too long: " + opts_.socket;
    std::memcpy(addr.sun_path, opts_.socket.c_str(), opts_.socket.size() + 1);
    std::string err = net_.error();
    if (!err.empty()) return err;
    detail::socket_t fd = detail::open_socket(AF_UNIX);
    if (fd == detail::no_socket) return "socket: " + detail::last_error();
    detail::set_timeouts(fd, opts_.timeout);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      std::string e = "connect " + opts_.socket + ": " + detail::last_error();
      detail::close_socket(fd);
      return e;
    }
    fd_.store(fd);
    buf_.clear();
    return "";
  }

  void close_conn() {
    detail::socket_t fd = fd_.exchange(detail::no_socket);
    if (fd != detail::no_socket) detail::close_socket(fd);
  }

  // round_trip sends one line and reads its reply line (over HTTP: the
  // request for it and the answer's body).
  std::string round_trip(const std::string& line, std::string& reply) {
    if (!opts_.http.empty()) return http_round_trip(fd_.load(), line, reply);
    detail::socket_t fd = fd_.load();
    std::string err = send_all(fd, line + "\n");
    if (!err.empty()) return err;
    for (;;) {
      size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        reply = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return "";
      }
      err = fill(fd);
      if (!err.empty()) return err;
      if (buf_.size() > (1u << 20)) return "reply too long";
    }
  }

  std::string send_all(detail::socket_t fd, const std::string& out) {
    for (size_t off = 0; off < out.size();) {
      auto n = ::send(fd, out.data() + off, detail::io_len(out.size() - off), detail::send_flags);
      if (n < 0 && detail::interrupted()) continue;
      if (n <= 0) return "send: " + detail::last_error();
      off += static_cast<size_t>(n);
    }
    return "";
  }

  // fill reads what the connection has into buf_.
  std::string fill(detail::socket_t fd) {
    for (;;) {
      char tmp[4096];
      auto n = ::recv(fd, tmp, sizeof tmp, 0);
      if (n < 0 && detail::interrupted()) continue;
      if (n == 0) return "queryd closed the connection";
      if (n < 0) return "recv: " + detail::last_error();
      buf_.append(tmp, static_cast<size_t>(n));
      return "";
    }
  }

  // dial_http connects to the HTTP feed and pings it: connected once
  // queryd answers (a wrong token is an error to back off from).
  std::string dial_http() {
    std::string hostport = opts_.http;
    if (hostport.compare(0, 7, "http://") == 0) hostport.erase(0, 7);
    while (!hostport.empty() && hostport.back() == '/') hostport.pop_back();
    size_t colon = hostport.rfind(':');
    if (colon == std::string::npos || colon + 1 == hostport.size()) return "http: want host:port, got " + opts_.http;
    std::string host = hostport.substr(0, colon), port = hostport.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    std::string err = net_.error();
    if (!err.empty()) return err;
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
    if (rc != 0 || !res) return "http " + hostport + ": " + gai_strerror(rc);
    err = "http " + hostport + ": no address";
    detail::socket_t fd = detail::no_socket;
    for (addrinfo* ai = res; ai; ai = ai->ai_next) {
      fd = detail::open_socket(ai->ai_family);
      if (fd == detail::no_socket) {
        err = "socket: " + detail::last_error();
        continue;
      }
      detail::set_timeouts(fd, opts_.timeout);
      if (::connect(fd, ai->ai_addr, static_cast<int>(ai->ai_addrlen)) == 0) break;
      err = "connect " + hostport + ": " + detail::last_error();
      detail::close_socket(fd);
      fd = detail::no_socket;
    }
    ::freeaddrinfo(res);
    if (fd == detail::no_socket) return err;
    host_ = hostport;
    buf_.clear();
    std::string reply;
    err = http_round_trip(fd, "{\"op\":\"ping\"}", reply);
    if (err.empty() && reply.compare(0, 10, "{\"ok\":true") != 0) err = "queryd refused the ping: " + reply;
    if (!err.empty()) {
      detail::close_socket(fd);
      return "http " + hostport + ": " + err;
    }
    fd_.store(fd);
    return "";
  }

  // http_round_trip sends a line as its HTTP request (replace: PUT
  // /v1/state, patch: PATCH /v1/state, ping: POST /v1/ping) and reads the
  // answer's body; a 401, a 5xx or "Connection: close" end the connection.
  std::string http_round_trip(detail::socket_t fd, const std::string& line, std::string& reply) {
    static const std::string replace = "{\"op\":\"replace\",\"state\":", patch = "{\"op\":\"patch\",\"state\":";
    std::string head = "POST /v1/ping", type = "application/json", body;
    if (line.compare(0, replace.size(), replace) == 0) {
      head = "PUT /v1/state";
      body = line.substr(replace.size(), line.size() - replace.size() - 1);
    } else if (line.compare(0, patch.size(), patch) == 0) {
      head = "PATCH /v1/state";
      type = "application/merge-patch+json";
      body = line.substr(patch.size(), line.size() - patch.size() - 1);
    }
    std::string err = send_all(fd, head + " HTTP/1.1\r\nHost: " + host_ + "\r\nAuthorization: Bearer " + opts_.token +
                                       "\r\nContent-Type: " + type + "\r\nContent-Length: " +
                                       std::to_string(body.size()) + "\r\n\r\n" + body);
    if (!err.empty()) return err;
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (buf_.size() > (64u << 10)) return "answer headers too long";
      err = fill(fd);
      if (!err.empty()) return err;
    }
    std::string headers = buf_.substr(0, end + 2);
    buf_.erase(0, end + 4);
    for (char& c : headers) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (headers.compare(0, 7, "http/1.") != 0 || headers.size() < 12) return "not an HTTP answer";
    int code = std::atoi(headers.c_str() + 9);
    size_t cl = headers.find("\r\ncontent-length:");
    if (cl == std::string::npos) return "HTTP " + std::to_string(code) + " without Content-Length";
    long long len = std::atoll(headers.c_str() + cl + 17);
    if (len < 0 || len > (1 << 20)) return "answer too long";
    while (buf_.size() < static_cast<size_t>(len)) {
      err = fill(fd);
      if (!err.empty()) return err;
    }
    reply = buf_.substr(0, static_cast<size_t>(len));
    buf_.erase(0, static_cast<size_t>(len));
    while (!reply.empty() && (reply.back() == '\n' || reply.back() == '\r')) reply.pop_back();
    if (code == 401 || code >= 500) return "HTTP " + std::to_string(code) + ": " + reply;
    if (headers.find("\r\nconnection: close") != std::string::npos) http_close_ = true;
    return "";
  }

  Options opts_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  Value accepted_;  // the last document queryd accepted
  bool have_accepted_ = false;
  std::deque<ChangePtr> pending_;  // changes not sent yet, oldest first
  ChangePtr inflight_;             // the change sent, its answer not read yet
  long long generation_ = 0;       // replace() calls
  bool resync_ = false;            // send the accepted document first
  bool ping_now_ = false;
  Clock::time_point last_sent_ = Clock::now();
  ErrorHandler on_error_;
  RejectHandler on_rejected_;
  detail::Net net_;  // Winsock started (WSAStartup) while the Feed lives
  std::atomic<detail::socket_t> fd_{detail::no_socket};
  std::string buf_;  // reply bytes read past the last line (worker only)
  std::string host_;  // the HTTP feed's host:port (worker only)
  bool http_close_ = false;  // the last HTTP answer said "Connection: close" (worker only)
  std::thread worker_;  // last: started once the rest is ready
};

}  // namespace queryd

#endif  // QUERYD_FEED_HPP
