project = "edge"

service "api" {
  port = 8080
  check "heartbeat" { # ERROR: Invalid check status
    ttl    = "30s"
    status = "ok"
  }
}
