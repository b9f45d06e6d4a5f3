int toolhost_support_placeholder(void);
