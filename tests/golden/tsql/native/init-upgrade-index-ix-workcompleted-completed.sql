-- native: init: upgrade index IX_WorkCompleted_Completed
/* queuetop */ CREATE INDEX [IX_WorkCompleted_Completed] ON [queuetop].[WorkCompleted] ([CompletedDate]) INCLUDE ([JobType], [CreatedDate], [RetrievedDate], [Outcome]) WITH (DROP_EXISTING = ON);
