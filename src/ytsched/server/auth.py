"""Who is calling, and may they: bearer tokens, users, and YTsaurus-style ACLs.

* Every request carries ``Authorization: Bearer <token>``; the token maps to a user
  (tokens are stored hashed).  ``root`` is created with the service and is a superuser.
* An ACL is a list of entries ``{action: allow|deny, subjects: [...], permissions: [...]}``.
  Subjects are user names or the groups ``users`` / ``everyone`` (every authenticated user)
  and ``superusers``.  A check walks the object and its ancestors (until one has
  ``inherit_acl = %false``): a matching ``deny`` refuses, else a matching ``allow`` grants,
  else the permission is refused.  Superusers pass every check, as in YTsaurus.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ytsched.server.errors import ApiError
from ytsched.store import Store
from ytsched.store.rows import token_hash

PERMISSIONS = frozenset(
    {"read", "write", "use", "administer", "create", "remove", "modify_children", "manage"}
)
SUPERUSER = "root"
ALL_USERS_GROUPS = frozenset({"users", "everyone"})
DEFAULT_POOL_TREES_ACL: list[dict[str, Any]] = [
    {"action": "allow", "subjects": ["users"], "permissions": ["use"]}
]
"""``//sys/pool_trees/@acl`` of a fresh cluster: everybody may use every pool."""


def validate_acl(value: object, where: str) -> list[dict[str, Any]]:
    """An ACL as YTsaurus writes it; refuses anything else with ``InvalidAcl``."""
    if not isinstance(value, list):
        raise ApiError("InvalidAcl", f"{where}: acl must be a list of entries")
    result: list[dict[str, Any]] = []
    for index, entry in enumerate(value):
        if not isinstance(entry, Mapping):
            raise ApiError("InvalidAcl", f"{where}: acl/{index} must be a map")
        unknown = set(entry) - {"action", "subjects", "permissions", "inheritance_mode"}
        if unknown:
            raise ApiError("InvalidAcl", f"{where}: acl/{index}: unknown keys {sorted(unknown)}")
        action = entry.get("action")
        if action not in ("allow", "deny"):
            raise ApiError("InvalidAcl", f"{where}: acl/{index}/action must be allow or deny")
        subjects = entry.get("subjects")
        permissions = entry.get("permissions")
        for name, items in (("subjects", subjects), ("permissions", permissions)):
            if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
                raise ApiError("InvalidAcl", f"{where}: acl/{index}/{name} must list strings")
        assert isinstance(permissions, list) and isinstance(subjects, list)
        bad = [p for p in permissions if p not in PERMISSIONS]
        if bad:
            raise ApiError(
                "InvalidAcl",
                f"{where}: acl/{index}: unknown permissions {bad}"
                f" (known: {', '.join(sorted(PERMISSIONS))})",
            )
        clean: dict[str, Any] = {
            "action": action,
            "subjects": list(subjects),
            "permissions": list(permissions),
        }
        if "inheritance_mode" in entry:
            clean["inheritance_mode"] = str(entry["inheritance_mode"])
        result.append(clean)
    return result


@dataclass(frozen=True, slots=True)
class AclNode:
    """One object on the way up: its ACL and whether it inherits its parent's."""

    acl: Sequence[Mapping[str, Any]]
    inherit: bool = True


class Auth:
    """Users and tokens (cached from the store) and permission checks."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.users = store.users()
        if SUPERUSER not in self.users:
            with store.transaction():
                store.save_user(SUPERUSER, True)
            self.users[SUPERUSER] = True
        self._tokens = store.tokens()

    def ensure_token(self, token: str, user: str = SUPERUSER) -> None:
        """Register a token given on the command line (e.g. the admin token)."""
        if not token:
            raise ApiError("InvalidToken", "a token must not be empty")
        if self._tokens.get(token_hash(token)) == user:
            return
        with self.store.transaction():
            self.store.add_token(token, user)
        self._tokens[token_hash(token)] = user

    def issue_token(self, user: str) -> str:
        if user not in self.users:
            raise ApiError("NoSuchUser", f"user {user!r} does not exist", user=user)
        token = secrets.token_urlsafe(24)
        with self.store.transaction():
            self.store.add_token(token, user)
        self._tokens[token_hash(token)] = user
        return token

    def create_user(self, name: object, superuser: bool = False) -> None:
        if (
            not isinstance(name, str)
            or not name
            or not name.replace("-", "").replace("_", "").replace(".", "").isalnum()
        ):
            raise ApiError("InvalidUserName", f"user name {name!r} must be letters, digits, -_.")
        if name in self.users:
            raise ApiError("AlreadyExists", f"user {name!r} already exists", user=name)
        with self.store.transaction():
            self.store.save_user(name, superuser)
        self.users[name] = superuser

    def remove_user(self, name: str) -> None:
        if name not in self.users:
            raise ApiError("NoSuchUser", f"user {name!r} does not exist", user=name)
        if name == SUPERUSER:
            raise ApiError("AuthorizationError", "user 'root' cannot be removed")
        with self.store.transaction():
            self.store.delete_user(name)
        del self.users[name]
        self._tokens = {h: u for h, u in self._tokens.items() if u != name}

    def authenticate(self, authorization: str | None) -> str:
        """The user of an ``Authorization: Bearer <token>`` header (401 otherwise)."""
        if not authorization:
            raise ApiError(
                "AuthenticationError", "request has no Authorization header (Bearer token)"
            )
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() not in ("bearer", "oauth") or not token:
            raise ApiError("AuthenticationError", "Authorization header must be 'Bearer <token>'")
        user = self._tokens.get(token_hash(token))
        if user is None or user not in self.users:
            raise ApiError("AuthenticationError", "invalid or revoked token")
        return user

    def is_superuser(self, user: str) -> bool:
        return self.users.get(user, False)

    def _subjects(self, user: str) -> set[str]:
        subjects = {user, *ALL_USERS_GROUPS}
        if self.is_superuser(user):
            subjects.add("superusers")
        return subjects

    def allowed(self, user: str, permission: str, chain: Iterable[AclNode]) -> bool:
        """Whether ``user`` has ``permission`` on the first object of ``chain``."""
        if self.is_superuser(user):
            return True
        subjects = self._subjects(user)
        allow = False
        for node in chain:
            for entry in node.acl:
                if permission not in entry.get("permissions", ()):
                    continue
                if not subjects.intersection(entry.get("subjects", ())):
                    continue
                if entry.get("action") == "deny":
                    return False
                allow = True
            if not node.inherit:
                break
        return allow

    def require(self, user: str, permission: str, chain: Iterable[AclNode], what: str) -> None:
        if not self.allowed(user, permission, chain):
            raise ApiError(
                "AuthorizationError",
                f"Access denied: {permission!r} permission for {what} is not allowed for user"
                f" {user!r}",
                user=user,
                permission=permission,
                object=what,
            )

    def require_superuser(self, user: str, what: str) -> None:
        if not self.is_superuser(user):
            raise ApiError(
                "AuthorizationError",
                f"Access denied: {what} needs a superuser; user {user!r} is not one",
                user=user,
            )
