// Roles: what a user of the service may do, and the role each route and method needs.
// A viewer reads and follows; a builder also submits, uploads, cancels and deletes
// (their own builds and models: ownership is the handlers', since it needs the record);
// an admin may do anything. The route table (route_table.h) gives each route its
// Access; NeededRole turns that and the request's method into a role. docs/api.md,
// "Users and roles", has the table this makes.
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "service/api_answer.h"
#include "service/route_table.h"

namespace trtwatch::service {

// Ordered: a role may do what every role before it may.
enum class Role : uint8_t { kViewer, kBuilder, kAdmin };

std::string_view RoleName(Role role);
// "viewer", "builder", "admin"; nullopt for anything else.
std::optional<Role> ParseRole(std::string_view name);
inline bool RoleAllows(Role have, Role needed) { return have >= needed; }

// The role `method` on a route of `access` needs; nullopt: none (public).
std::optional<Role> NeededRole(Access access, Method method);

// "viewer" -> "a viewer", "admin" -> "an admin": for refusals that read as a sentence.
std::string_view RoleWithArticle(Role role);

}  // namespace trtwatch::service
