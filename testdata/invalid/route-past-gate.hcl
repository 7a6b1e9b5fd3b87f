project = "edge"

service "api" {
  port = 8080
  frontend {
    rule = "Path:/api"
    forward_auth {
      address = "http://127.0.0.1:8080/auth"
    }
  }
}

service "raw" { # ERROR: Tag would bypass the gate
  port = 9000
  tags = ["traefik.tcp.routers.raw.rule=HostSNI(`*`)"]
}

service "open" { # ERROR: Tag would bypass the gate
  port = 9001
  tags = ["traefik.HTTP.routers.all.RULE=PathPrefix(`/`)"]
}

service "to-api" { # ERROR: Tag would bypass the gate
  port = 9002
  tags = ["traefik.http.routers.o.rule=Host(`o.example`)", "traefik.http.routers.o.service=api@consulcatalog"]
}

# Not the gate's: another host's path, a TCP router on an entrypoint of
# its own while the gate names its entrypoint.
service "other" {
  port = 9003
  tags = ["traefik.http.routers.other.rule=Host(`other.example`) && PathPrefix(`/api`)"]
}
