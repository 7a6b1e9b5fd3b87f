project = "shop"

service "web" {
  port = 8080
  connect {
    sidecar_service {
      check "alive" {
        ttl = "10s"
      }
      check "bad" { # ERROR: Invalid check status
        ttl    = "10s"
        status = "bogus"
      }
    }
  }
}
