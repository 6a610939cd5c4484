/** fxa-common-password-list ships no types: its one export (src/passwordcheck.js). */
declare module 'fxa-common-password-list' {
  const commonPasswordList: {
    /** True when `password` (compared as given; the list is lower case) is on the list. */
    test(password: string): boolean;
  };
  export default commonPasswordList;
}
