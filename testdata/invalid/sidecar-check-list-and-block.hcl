project = "shop"

service "web" {
  port = 8080
  connect {
    sidecar_service {
      checks = [{ name = "alive", ttl = "10s" }]
      check "ready" { # ERROR: Duplicate checks
        ttl = "10s"
      }
    }
  }
}
