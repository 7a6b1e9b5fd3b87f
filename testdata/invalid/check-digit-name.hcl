project = "edge"

service "api" {
  port = 8080
  check "1" { # ERROR: Invalid check name
    tcp      = "127.0.0.1:8080"
    interval = "10s"
  }
}
