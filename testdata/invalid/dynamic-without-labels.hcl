project = "edge"

service "api" {
  port = 8080
  dynamic "check" { # ERROR: Missing required argument
    for_each = { health = "10s" }
    content {
      http     = "http://127.0.0.1:8080/healthz"
      interval = check.value
    }
  }
}
