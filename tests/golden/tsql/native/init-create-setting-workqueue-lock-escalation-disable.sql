-- native: init: create setting WorkQueue LOCK_ESCALATION = DISABLE
/* queuetop */ ALTER TABLE [queuetop].[WorkQueue] SET (LOCK_ESCALATION = DISABLE);
