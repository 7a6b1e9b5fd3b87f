project = "edge"

service "web" { # ERROR: Invalid kind
  port = 8080
  kind = "sidecar"
}
