#include "service/roles.h"

namespace trtwatch::service {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kViewer:
      return "viewer";
    case Role::kBuilder:
      return "builder";
    case Role::kAdmin:
      return "admin";
  }
  return "viewer";
}

std::optional<Role> ParseRole(std::string_view name) {
  for (Role role : {Role::kViewer, Role::kBuilder, Role::kAdmin}) {
    if (name == RoleName(role)) return role;
  }
  return std::nullopt;
}

std::optional<Role> NeededRole(Access access, Method method) {
  switch (access) {
    case Access::kPublic:
      return std::nullopt;
    case Access::kViewer:
      return Role::kViewer;
    case Access::kReadWrite:
      // An unknown method needs the most the route ever asks: its handler answers 405.
      return method == Method::kGet ? Role::kViewer : Role::kBuilder;
    case Access::kBuilder:
      return Role::kBuilder;
    case Access::kAdmin:
      return Role::kAdmin;
  }
  return Role::kAdmin;
}

std::string_view RoleWithArticle(Role role) { return role == Role::kAdmin ? "an admin" : role == Role::kViewer ? "a viewer" : "a builder"; }

}  // namespace trtwatch::service
