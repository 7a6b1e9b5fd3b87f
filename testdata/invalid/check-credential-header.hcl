project = "edge"

service "api" {
  port = 8080
  check "health" {
    http     = "http://127.0.0.1:8080/healthz"
    header   = { Authorization = ["Bearer abc"] } # ERROR: Credentials in a spec
    interval = "10s"
  }
}
