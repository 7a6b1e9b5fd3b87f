project = "edge"

service "api" {
  port = 8080
  dynamic "chek" { # ERROR: Unsupported block type
    for_each = { health = "10s" }
    labels   = [chek.key]
    content {
      http     = "http://127.0.0.1:8080/healthz"
      interval = chek.value
    }
  }
}
