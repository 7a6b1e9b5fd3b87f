project = "edge"

service "api" {
  port = 8080
  check "health" { # ERROR: Invalid check
    http     = "http://127.0.0.1:8080/healthz"
    tcp      = "127.0.0.1:8080"
    interval = "10s"
  }
}
