/** role-based-email-addresses ships plain JavaScript: one array of local parts (with its groups as properties). */
declare module "role-based-email-addresses" {
  const roles: readonly string[];
  export = roles;
}
