project = "edge"

variable "ports" {
  default   = { a = 8080 }
  sensitive = true
}

service "api" {
  for_each = var.ports # ERROR: Sensitive value in for_each
  port     = each.value
}
