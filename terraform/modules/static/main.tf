# No cloud: the racks exist already. Each host becomes a terraform_data resource so that the
# state records the inventory, a changed host shows in `terraform plan`, and `destroy`
# forgets the testbed without touching the machines.
resource "terraform_data" "node" {
  for_each = { for h in var.hosts : h.name => h }

  input = merge(each.value, { tags = var.tags })
}
