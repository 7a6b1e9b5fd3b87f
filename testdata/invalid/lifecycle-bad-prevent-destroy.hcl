project = "edge"

variable "keep" {
  type    = bool
  default = true
}

key "apps/edge/mode" {
  value = "on"
  lifecycle {
    prevent_destroy = var.keep # ERROR: Invalid prevent_destroy
  }
}
