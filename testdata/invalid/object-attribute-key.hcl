project = "shop"

service "web" {
  port = 8080
  connect = {
    sidecar_service = {
      port = 21000
      nope = 1 # ERROR: Unsupported argument
    }
  }
}
