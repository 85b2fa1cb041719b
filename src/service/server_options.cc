#include "service/server_options.h"

#include <boost/asio/ip/address.hpp>
#include <filesystem>
#include <cctype>
#include <fstream>

#include "builds/build_request.h"  // kMaxCancelGraceSeconds
#include "service/http_request.h"  // ParseInt

namespace trtwatch::service {

ListenAddress ParseListen(const std::string& listen) {
  ListenAddress out;
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    out.error = "--listen must be HOST:PORT, e.g. 127.0.0.1:8470 (got \"" + listen + "\")";
    return out;
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  int64_t p = -1;
  if (ec || !ParseInt(std::string_view(listen).substr(colon + 1), &p) || p < 0 || p > 65535) {
    out.error = "--listen must be HOST:PORT with a numeric address and a port 0-65535, e.g. 127.0.0.1:8470 (got \"" +
                listen + "\")";
    return out;
  }
  out.host = std::move(host);
  out.port = static_cast<unsigned short>(p);
  return out;
}

bool ReadTokenFile(const std::string& path, std::string* token, std::string* error) {
  namespace fs = std::filesystem;
  constexpr uintmax_t kMaxTokenFile = 4096;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    *error = "cannot read --token-file \"" + path + "\": " + (ec ? ec.message() : "no such file");
    return false;
  }
  if (!fs::is_regular_file(st)) {
    *error = "--token-file \"" + path + "\" is not a regular file; put the token in a file of its own";
    return false;
  }
  if ((st.permissions() & (fs::perms::group_all | fs::perms::others_all)) != fs::perms::none) {
    *error = "--token-file \"" + path + "\" is accessible by other users; run: chmod 600 " + path;
    return false;
  }
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || size > kMaxTokenFile) {
    *error = "--token-file \"" + path + "\" is larger than 4096 bytes; it must hold the token only";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read --token-file \"" + path + "\"";
    return false;
  }
  std::string text(kMaxTokenFile + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  for (char c : text) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      *error = "--token-file \"" + path + "\" must hold one line: the token, without spaces or control characters";
      return false;
    }
  }
  if (text.size() < 16) {
    *error = "the token in --token-file must be at least 16 characters (try: openssl rand -hex 32 > FILE)";
    return false;
  }
  *token = std::move(text);
  return true;
}

namespace {

// --trusted-proxy and --identity-header: both or neither, numeric addresses, a header
// name that is a token (RFC 9110 §5.1).
std::string CheckTrustedProxy(const ServerOptions& options) {
  if (options.trusted_proxies.empty() != options.identity_header.empty()) {
    return options.trusted_proxies.empty()
               ? "--identity-header needs --trusted-proxy ADDR, the proxy's address, to know whom to believe"
               : "--trusted-proxy needs --identity-header NAME, the header the proxy names the user in (e.g. "
                 "X-Forwarded-User)";
  }
  for (const std::string& address : options.trusted_proxies) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(address, ec);
    if (ec) return "--trusted-proxy must be an IP address, e.g. 127.0.0.1 (got \"" + address + "\")";
  }
  for (char c : options.identity_header) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) {
      return "--identity-header must be a header name of letters, digits, - and _ (got \"" + options.identity_header +
             "\")";
    }
  }
  if (!options.trusted_proxies.empty() && options.users_file.empty()) {
    return "--trusted-proxy needs --users FILE: the proxy's users must be listed there with their roles";
  }
  return {};
}

}  // namespace

CheckedServerOptions CheckServerOptions(const ServerOptions& options) {
  CheckedServerOptions checked;
  std::string& error = checked.error;
  const ListenAddress listen = ParseListen(options.listen);
  if (!listen.error.empty()) {
    error = listen.error;
    return checked;
  }
  if (!options.token_file.empty() && !ReadTokenFile(options.token_file, &checked.token, &error)) return checked;
  if (error = CheckTrustedProxy(options); !error.empty()) return checked;
  boost::system::error_code ec;
  if (!boost::asio::ip::make_address(listen.host, ec).is_loopback() && checked.token.empty() &&
      options.users_file.empty()) {
    error = "listening on " + options.listen +
            " (not loopback) needs credentials: add --users FILE (trtwatch user add) or --token-file FILE, or listen "
            "on 127.0.0.1";
  } else if (options.max_connections < 0 || options.max_sse_clients < 0) {
    error = "--max-connections and --max-sse-clients must be 0 (automatic) or more";
  } else if (!(options.builds.cancel_grace_seconds >= 0 && options.builds.cancel_grace_seconds <= builds::kMaxCancelGraceSeconds)) {
    error = "--cancel-grace must be from 0 to 1h";
  }
  if (!error.empty()) return checked;
  Result<UsersSource> users = UsersSource::Open(options.users_file, checked.token);
  if (!users.ok()) {
    error = users.error();
  } else {
    checked.users.emplace(std::move(users).value());
  }
  return checked;
}

}  // namespace trtwatch::service
