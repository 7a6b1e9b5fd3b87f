project = "edge"

service "api" {
  port = 8080
  dynamic "check" {
    for_each = { live = "10s", ready = "soon" }
    labels   = [check.key]
    content {
      http     = "http://127.0.0.1:8080/${check.key}"
      interval = check.value # ERROR: Invalid duration
    }
  }
}
