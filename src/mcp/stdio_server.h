// `trtwatch mcp`: the MCP server over stdio (one JSON-RPC message per line on stdin
// and stdout; nothing else is ever written to stdout), over the builds layer that the
// composition root (app/run_mcp.cc) assembles: builds are records in the same store
// `trtwatch serve` lists, and its dashboard shows them.
//
// It ends when stdin closes or on SIGTERM/SIGINT: running builds are cancelled
// cooperatively first.
#pragma once

#include "mcp/session.h"

namespace boost::asio {
class io_context;
}

namespace trtwatch::builds {
class BuildManager;
}

namespace trtwatch::mcp {

// Serves on stdin/stdout with `tools`, whose builds `manager` runs, all on `io`'s
// thread, until stdin closes or a signal; returns the exit code (2 if stdin cannot be
// read, with a message).
int RunStdioServer(boost::asio::io_context& io, Tools& tools, builds::BuildManager& manager, const ServerInfo& info);

}  // namespace trtwatch::mcp
