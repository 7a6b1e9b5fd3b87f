project = "edge"

service "api" {
  port = 8080
  check "heartbeat" { # ERROR: Interval of a ttl check
    ttl      = "30s"
    interval = "10s"
  }
}
