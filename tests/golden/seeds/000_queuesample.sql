-- Seed 000 (/work/shared/seeds/000_4e9320293a845eb6.txt): the schema, table, view and procedures, as the post gives
-- them, without the prose between them (the test script and the cleanup after them are left out).
create schema QueueSample authorization dbo
go
create table QueueSample.WorkQueue
(
WorkQueueID bigint not null identity(1,1) primary key clustered,
JobType uniqueidentifier not null,
JobInfo xml null,
CreatedDate datetime not null default(getdate()),
CreatedBy uniqueidentifier null,
ModifiedDate datetime null,
ModifiedBy uniqueidentifier null,
RetrievedDate datetime null,
RetrievedBy uniqueidentifier null
) on [primary]
go
create view QueueSample.WorkQueue_Pending
as
select *
from QueueSample.WorkQueue
where RetrievedDate is null
go
create proc QueueSample.ViewQueue
(
@JobType uniqueidentifier = null
)
-- Look at pending jobs (jobs not yet retrieved)
as
begin
select JobType, JobInfo,
CreatedDate, CreatedBy,
ModifiedDate, ModifiedBy
from QueueSample.WorkQueue_Pending
where @JobType is null
or JobType = @JobType
end --proc
go
create proc QueueSample.QueueJob
(
@JobType uniqueidentifier,
@JobInfo xml = null,
@CreatedBy uniqueidentifier = null
)
-- Add a new unit of work to the queue
as
begin
insert into QueueSample.WorkQueue
( JobType, JobInfo, CreatedBy )
output inserted.WorkQueueID
values ( @JobType, @JobInfo, @CreatedBy )
end --proc
go
create proc QueueSample.GetNextJob
(
@JobType uniqueidentifier,
@RetrievedBy uniqueidentifier = null
)
-- get the next unit of work from the queue for a specific job type
as
begin
update top(1) QueueSample.WorkQueue_Pending with (readpast)
set RetrievedDate = getdate(),
RetrievedBy = @RetrievedBy
output deleted.JobInfo,
deleted.CreatedBy,
deleted.CreatedDate,
deleted.ModifiedBy,
deleted.ModifiedDate,
inserted.RetrievedDate
where JobType = @JobType
end --proc
go
